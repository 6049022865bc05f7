import { initContract } from '@ts-rest/core';
import { IdempotencyHeaders } from './idempotency.ts';
import { LIST_PAGE_MAX_BYTES, ListPlantsQuery, PlantIdParams } from './parameters.ts';
import { andList } from './prose.ts';
import { ApiError, NewPlant, Plant, PlantWithId } from './schemas.ts';
import { WEBHOOK_TESTS_PER_MINUTE, WebhookTestRequest, WebhookTestResult } from './webhook-test.ts';
import {
  CreatedWebhookEndpoint,
  ListWebhookDeliveriesQuery,
  NewWebhookEndpoint,
  RecoverWebhookDeliveries,
  RequeuedWebhookDeliveries,
  RotatedWebhookSecret,
  WEBHOOK_ENDPOINT_CHANGE_FIELDS,
  WEBHOOK_ENDPOINTS_MAX,
  WEBHOOK_RECOVER_MAX,
  WebhookDelivery,
  WebhookDeliveryParams,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookIdParams,
} from './webhooks.ts';

const c = initContract();

/**
 * What any route may answer: 400, 401 and 403 (the request, the token, its scope), 408 and 431
 * (from Node's HTTP parser), 429 (a rate limit), 500 and 503.
 */
const ANY_ROUTE_FAILURES = [400, 401, 403, 408, 429, 431, 500, 503] as const;

/**
 * A route's responses: its successes, then the Error body under every status of
 * ANY_ROUTE_FAILURES and under the route's own further `statuses`. Typed as an intersection rather
 * than spread in the route: TypeScript 7 widens spread numeric keys to strings, which would hide
 * them from ts-rest.
 */
const withFailures = <const Successes extends Record<number, unknown>, const Statuses extends number[]>(
  successes: Successes,
  ...statuses: Statuses
) =>
  ({
    ...successes,
    ...Object.fromEntries([...ANY_ROUTE_FAILURES, ...statuses].map((status) => [status, ApiError])),
  }) as Successes & { [Status in (typeof ANY_ROUTE_FAILURES)[number] | Statuses[number]]: typeof ApiError };

/**
 * The OAuth scopes a JWT may carry, one per resource and access. A `:write` scope also grants the
 * `:read` scope of its resource. The service's unnamed API tokens may do everything; named ones
 * carry the scopes their configuration gives. `webhooks:admin` (WEBHOOKS_ADMIN_SCOPE) is no
 * route's: it grants the webhook scopes on every principal's endpoints.
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
      responses: withFailures({ 200: Plant }, 404, 409, 413, 415),
    },
    listPlants: {
      method: 'GET',
      path: '/plants',
      metadata: { scope: 'plants:read' } as const satisfies RouteMetadata,
      summary: 'List plants',
      description: `Answers stored plants ordered by id. When more remain, a \`Link: <?limit=…&after=…>; rel="next"\` header gives the next page; the body stays a plain array. \`limit\` is a maximum: a page also ends once its plants hold ${LIST_PAGE_MAX_BYTES / 1024} KiB of JSON (UTF-8), so it may hold fewer plants and still have a next page; follow the link until there is none. When too many large answers are in flight the service answers 503 with Retry-After.`,
      query: ListPlantsQuery,
      responses: withFailures({ 200: PlantWithId.array() }),
    },
    getPlant: {
      method: 'GET',
      path: '/plants/:id',
      metadata: { scope: 'plants:read' } as const satisfies RouteMetadata,
      summary: 'Get a plant',
      description: 'Answers the plant stored under the id, or 404.',
      pathParams: PlantIdParams,
      responses: withFailures({ 200: PlantWithId }, 404),
    },
    deletePlant: {
      method: 'DELETE',
      path: '/plants/:id',
      metadata: { scope: 'plants:write' } as const satisfies RouteMetadata,
      summary: 'Delete a plant',
      description: 'Removes the plant stored under the id (204), or answers 404. The id may then be created again.',
      pathParams: PlantIdParams,
      body: c.noBody(),
      responses: withFailures({ 204: c.noBody() }, 404),
    },
    createWebhook: {
      method: 'POST',
      path: '/webhooks',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Subscribe a receiver to new plants',
      description: `Registers a URL that every newly created plant is POSTed to (see the newPlant webhook), signed with the secret in this answer, which is shown only here. The URL must be https and its host must have only public addresses. The caller owns the endpoint: other principals' requests answer 404 for it as for an id that does not exist. At most ${WEBHOOK_ENDPOINTS_MAX} endpoints per principal, and the service's own cap on all of them (409 beyond).`,
      headers: IdempotencyHeaders,
      body: NewWebhookEndpoint,
      responses: withFailures({ 201: CreatedWebhookEndpoint }, 409, 413, 415, 422),
    },
    listWebhooks: {
      method: 'GET',
      path: '/webhooks',
      metadata: { scope: 'webhooks:read' } as const satisfies RouteMetadata,
      summary: 'List webhook endpoints',
      description:
        "Answers the endpoints the caller registered, oldest first, without secrets; with the webhooks:admin scope, every principal's, each with its owner.",
      responses: withFailures({ 200: WebhookEndpoint.array() }),
    },
    getWebhook: {
      method: 'GET',
      path: '/webhooks/:id',
      metadata: { scope: 'webhooks:read' } as const satisfies RouteMetadata,
      summary: 'Get a webhook endpoint',
      description:
        "Answers the endpoint registered under the id (without its secret), or 404: another principal's endpoint answers 404 as an unknown id does, unless the caller has the webhooks:admin scope.",
      pathParams: WebhookIdParams,
      responses: withFailures({ 200: WebhookEndpoint }, 404),
    },
    updateWebhook: {
      method: 'PATCH',
      path: '/webhooks/:id',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Change a webhook endpoint',
      description: `Changes any of ${andList(WEBHOOK_ENDPOINT_CHANGE_FIELDS)}: url is checked as at registration (409 when another endpoint has it); null removes description or rateLimit; eventTypes applies to the events announced after the change, payloadFormat to the deliveries made after it. Disabling stops deliveries to the endpoint: its pending deliveries wait. Enabling a disabled endpoint sends them again, due now (the delivery a 410 Gone answer failed stays failed: recover or retry it). Plants created while it was disabled are not announced to it.`,
      pathParams: WebhookIdParams,
      body: WebhookEndpointChanges,
      responses: withFailures({ 200: WebhookEndpoint }, 404, 409, 413, 415),
    },
    rotateWebhookSecret: {
      method: 'POST',
      path: '/webhooks/:id/rotate-secret',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: "Rotate a webhook endpoint's signing secret",
      description:
        'Answers a new signing secret, shown only here. For the rotation grace (PLANT_WEBHOOK_ROTATION_GRACE_MS, 24 hours by default) every delivery carries two signatures in webhook-signature, with the new secret and the previous one, so that the receiver can switch to the new secret without missing a delivery.',
      pathParams: WebhookIdParams,
      headers: IdempotencyHeaders,
      body: c.noBody(),
      responses: withFailures({ 200: RotatedWebhookSecret }, 404, 409, 422),
    },
    recoverWebhook: {
      method: 'POST',
      path: '/webhooks/:id/recover',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Attempt failed deliveries again',
      description: `Makes the failed deliveries to the endpoint announced at or after \`since\` pending again, due now, oldest first, with their original webhook-id: after a receiver outage. Each is attempted once more. At most ${WEBHOOK_RECOVER_MAX} per request: when \`requeued\` is ${WEBHOOK_RECOVER_MAX}, send it again for the rest. 409 when the endpoint is disabled (enable it first).`,
      pathParams: WebhookIdParams,
      headers: IdempotencyHeaders,
      body: RecoverWebhookDeliveries,
      responses: withFailures({ 202: RequeuedWebhookDeliveries }, 404, 409, 413, 415, 422),
    },
    retryWebhookDelivery: {
      method: 'POST',
      path: '/webhooks/:id/deliveries/:deliveryId/retry',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Attempt one delivery again',
      description:
        'Makes the delivery pending and due now, whatever its status (a delivered one is sent again), with its original webhook-id. 404 when the endpoint or the delivery is unknown; 409 when the endpoint is disabled (enable it first).',
      pathParams: WebhookDeliveryParams,
      body: c.noBody(),
      responses: withFailures({ 202: c.noBody() }, 404, 409),
    },
    testWebhook: {
      method: 'POST',
      path: '/webhooks/:id/test',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Send a test delivery to a webhook endpoint',
      description: `Sends one signed test event to the endpoint now, outside the outbox and its retries, as a real delivery would go (the same address checks, timeout, signing secrets and payload format), and answers 200 with what happened: the receiver's status, the time taken, whether it counts as delivered, and why it failed. The event is \`eventType\` (the endpoint's first subscribed type by default) carrying an example plant with id 0; its webhook-id starts with \`msg_test_\`, which no real delivery's does. A disabled endpoint may be tested too (to check a receiver before enabling it again). At most ${WEBHOOK_TESTS_PER_MINUTE} tests a minute per principal and endpoint URL, across replicas and across deleting and registering the endpoint again (429 with Retry-After beyond); 429 with Retry-After when the principal has its most tests in flight, 503 when the service has.`,
      pathParams: WebhookIdParams,
      headers: IdempotencyHeaders,
      body: WebhookTestRequest.optional(),
      responses: withFailures({ 200: WebhookTestResult }, 404, 409, 413, 415, 422),
    },
    deleteWebhook: {
      method: 'DELETE',
      path: '/webhooks/:id',
      metadata: { scope: 'webhooks:write' } as const satisfies RouteMetadata,
      summary: 'Delete a webhook endpoint',
      description: 'Unsubscribes the endpoint (204), or answers 404; deliveries still pending for it are dropped.',
      pathParams: WebhookIdParams,
      body: c.noBody(),
      responses: withFailures({ 204: c.noBody() }, 404),
    },
    listWebhookDeliveries: {
      method: 'GET',
      path: '/webhooks/:id/deliveries',
      metadata: { scope: 'webhooks:read' } as const satisfies RouteMetadata,
      summary: 'List deliveries to a webhook endpoint',
      description:
        'Answers the announcements made to the endpoint, newest first: each with its webhook-id, the plant, and where its delivery stands. When older ones remain, a `Link: <?limit=…&before=…>; rel="next"` header gives the next page; the body stays a plain array. Follow the link until there is none.',
      pathParams: WebhookIdParams,
      query: ListWebhookDeliveriesQuery,
      responses: withFailures({ 200: WebhookDelivery.array() }, 404),
    },
  },
  { strictStatusCodes: true },
);

export type PlantContract = typeof contract;
