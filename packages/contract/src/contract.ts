import { initContract } from '@ts-rest/core';
import { ListPlantsQuery, PlantIdParams } from './parameters.ts';
import { ApiError, NewPlant, Plant, PlantWithId } from './schemas.ts';
import {
  CreatedWebhookEndpoint,
  ListWebhookDeliveriesQuery,
  NewWebhookEndpoint,
  WEBHOOK_ENDPOINTS_MAX,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookIdParams,
} from './webhooks.ts';

const c = initContract();

/**
 * The OAuth scopes a JWT may carry, one per resource and access. A `:write` scope also grants the
 * `:read` scope of its resource. Static API tokens carry no scopes and may do everything.
 */
export const SCOPES = ['plants:read', 'plants:write', 'webhooks:read', 'webhooks:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** What every route declares in its `metadata`: the scope a token needs to call it. */
export type RouteMetadata = { readonly scope: Scope };

export const contract = c.router(
  {
    createPlant: {
      method: 'POST',
      path: '/plants',
      metadata: { scope: 'plants:write' } as const satisfies RouteMetadata,
      summary: 'Create a plant',
      description:
        'Stores a new plant under the client-chosen id. Creation is idempotent by id: sending the same plant again answers 200 and stores nothing new; the same id with different data answers 409.',
      body: NewPlant,
      // Every status the service answers. Spelled out rather than spread from a shared object:
      // TypeScript 7 widens spread numeric keys to strings, which would hide them from ts-rest.
      responses: {
        200: Plant,
        400: ApiError,
        401: ApiError,
        403: ApiError,
        404: ApiError,
        409: ApiError,
        413: ApiError,
        415: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    listPlants: {
      method: 'GET',
      path: '/plants',
      metadata: { scope: 'plants:read' } as const satisfies RouteMetadata,
      summary: 'List plants',
      description:
        'Answers stored plants ordered by id. When more remain, a `Link: <?limit=…&after=…>; rel="next"` header gives the next page; the body stays a plain array.',
      query: ListPlantsQuery,
      responses: {
        200: PlantWithId.array(),
        400: ApiError,
        401: ApiError,
        403: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    getPlant: {
      method: 'GET',
      path: '/plants/:id',
      metadata: { scope: 'plants:read' } as const satisfies RouteMetadata,
      summary: 'Get a plant',
      description: 'Answers the plant stored under the id, or 404.',
      pathParams: PlantIdParams,
      responses: {
        200: PlantWithId,
        400: ApiError,
        401: ApiError,
        403: ApiError,
        404: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    deletePlant: {
      method: 'DELETE',
      path: '/plants/:id',
      metadata: { scope: 'plants:write' } as const satisfies RouteMetadata,
      summary: 'Delete a plant',
      description: 'Removes the plant stored under the id (204), or answers 404. The id may then be created again.',
      pathParams: PlantIdParams,
      body: c.noBody(),
      responses: {
        204: c.noBody(),
        400: ApiError,
        401: ApiError,
        403: ApiError,
        404: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    createWebhook: {
      method: 'POST',
      path: '/webhooks',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Subscribe a receiver to new plants',
      description: `Registers a URL that every newly created plant is POSTed to (see the newPlant webhook), signed with the secret in this answer, which is shown only here. The URL must be https and its host must have only public addresses. At most ${WEBHOOK_ENDPOINTS_MAX} endpoints may be registered (409 beyond).`,
      body: NewWebhookEndpoint,
      responses: {
        201: CreatedWebhookEndpoint,
        400: ApiError,
        401: ApiError,
        403: ApiError,
        409: ApiError,
        413: ApiError,
        415: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    listWebhooks: {
      method: 'GET',
      path: '/webhooks',
      metadata: { scope: 'webhooks:read' } as const satisfies RouteMetadata,
      summary: 'List webhook endpoints',
      description: 'Answers every registered endpoint, oldest first, without secrets.',
      responses: {
        200: WebhookEndpoint.array(),
        400: ApiError,
        401: ApiError,
        403: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    getWebhook: {
      method: 'GET',
      path: '/webhooks/:id',
      metadata: { scope: 'webhooks:read' } as const satisfies RouteMetadata,
      summary: 'Get a webhook endpoint',
      description: 'Answers the endpoint registered under the id (without its secret), or 404.',
      pathParams: WebhookIdParams,
      responses: {
        200: WebhookEndpoint,
        400: ApiError,
        401: ApiError,
        403: ApiError,
        404: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    deleteWebhook: {
      method: 'DELETE',
      path: '/webhooks/:id',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Delete a webhook endpoint',
      description: 'Unsubscribes the endpoint (204), or answers 404; deliveries still pending for it are dropped.',
      pathParams: WebhookIdParams,
      body: c.noBody(),
      responses: {
        204: c.noBody(),
        400: ApiError,
        401: ApiError,
        403: ApiError,
        404: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
    listWebhookDeliveries: {
      method: 'GET',
      path: '/webhooks/:id/deliveries',
      metadata: { scope: 'webhooks:read' } as const satisfies RouteMetadata,
      summary: 'List deliveries to a webhook endpoint',
      description:
        'Answers the announcements made to the endpoint, newest first: each with its webhook-id, the plant, and where its delivery stands.',
      pathParams: WebhookIdParams,
      query: ListWebhookDeliveriesQuery,
      responses: {
        200: WebhookDelivery.array(),
        400: ApiError,
        401: ApiError,
        403: ApiError,
        404: ApiError,
        429: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
  },
  { strictStatusCodes: true },
);

export type PlantContract = typeof contract;
