import { randomBytes } from 'node:crypto';
import { contract, DELIVERIES_LIMIT_DEFAULT, WEBHOOK_ENDPOINTS_MAX } from '@org/plant-contract';
import { initServer } from '@ts-rest/express';
import { jsonBody } from '../http/json-body.ts';
import type { StoredDelivery, StoredEndpoint, WebhookStore } from '../store/webhook-store.ts';
import { newSecret } from './signature.ts';
import { refuseTarget, type TargetPolicy } from './target-address.ts';

export type WebhooksRouterOptions = TargetPolicy & { bodyLimit?: number | undefined };

const s = initServer();

/** The contract's WebhookEndpoint: never the secret. */
const toEndpoint = ({ id, url, description, enabled, disabledReason, createdAt }: StoredEndpoint) => ({
  id,
  url,
  ...(description !== undefined && { description }),
  enabled,
  ...(disabledReason !== undefined && { disabledReason }),
  createdAt: createdAt.toISOString(),
});

const toDelivery = (delivery: StoredDelivery) => ({
  id: delivery.id,
  plantId: delivery.plantId,
  status: delivery.status,
  attempts: delivery.attempts,
  ...(delivery.lastStatus !== undefined && { lastStatus: delivery.lastStatus }),
  ...(delivery.lastError !== undefined && { lastError: delivery.lastError }),
  ...(delivery.nextAttemptAt !== undefined && { nextAttemptAt: delivery.nextAttemptAt.toISOString() }),
  ...(delivery.deliveredAt !== undefined && { deliveredAt: delivery.deliveredAt.toISOString() }),
});

const notFound = (id: string) => ({
  status: 404 as const,
  body: { error: 404, message: `No webhook endpoint has id ${JSON.stringify(id.slice(0, 100))}.` },
});

/** `ep_` and 32 hex digits. */
const newEndpointId = (): string => `ep_${randomBytes(16).toString('hex')}`;

/** The handlers of the webhook management routes, one per route of the contract. */
export const createWebhooksRouter = (store: WebhookStore, { bodyLimit, ...policy }: WebhooksRouterOptions) => ({
  createWebhook: s.route(contract.createWebhook, {
    middleware: jsonBody(bodyLimit),
    handler: async ({ body }) => {
      const refusal = await refuseTarget(body.url, policy);
      if (refusal !== undefined)
        return { status: 400, body: { error: 400, message: `Invalid request body: ${refusal}` } };
      const secret = newSecret();
      const endpoint = await store.createEndpoint(
        {
          id: newEndpointId(),
          url: body.url,
          ...(body.description !== undefined && { description: body.description }),
          secret,
          createdAt: new Date(),
        },
        WEBHOOK_ENDPOINTS_MAX,
      );
      if (endpoint === undefined) {
        const message = `At most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints may be registered; delete one first.`;
        return { status: 409, body: { error: 409, message } };
      }
      return { status: 201, body: { ...toEndpoint(endpoint), secret } };
    },
  }),

  listWebhooks: s.route(contract.listWebhooks, async () => ({
    status: 200,
    body: (await store.listEndpoints()).map(toEndpoint),
  })),

  getWebhook: s.route(contract.getWebhook, async ({ params }) => {
    const endpoint = await store.getEndpoint(params.id);
    return endpoint ? { status: 200, body: toEndpoint(endpoint) } : notFound(params.id);
  }),

  deleteWebhook: s.route(contract.deleteWebhook, async ({ params }) =>
    (await store.deleteEndpoint(params.id)) ? { status: 204, body: undefined } : notFound(params.id),
  ),

  listWebhookDeliveries: s.route(contract.listWebhookDeliveries, async ({ params, query }) => {
    const deliveries = await store.listDeliveries(params.id, query.limit ?? DELIVERIES_LIMIT_DEFAULT);
    return deliveries ? { status: 200, body: deliveries.map(toDelivery) } : notFound(params.id);
  }),
});
