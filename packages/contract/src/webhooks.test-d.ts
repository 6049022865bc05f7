import type { ClientInferRequest, ServerInferResponses } from '@ts-rest/core';
import { expectTypeOf } from 'vitest';
import type { contract } from './contract.ts';
import type { CreatedWebhookEndpoint, NewWebhookEndpoint, WebhookDelivery, WebhookEndpoint } from './webhooks.ts';

expectTypeOf<NewWebhookEndpoint>().toEqualTypeOf<{
  url: string;
  description?: string | undefined;
  eventTypes?: ('newPlant' | 'plantDeleted')[] | undefined;
  payloadFormat?: 'plain' | 'standard' | undefined;
  rateLimit?: number | undefined;
}>();
// Optional in answers: an older service answered neither.
expectTypeOf<WebhookEndpoint['eventTypes']>().toEqualTypeOf<('newPlant' | 'plantDeleted')[] | undefined>();
expectTypeOf<ClientInferRequest<typeof contract.createWebhook>['body']>().toEqualTypeOf<NewWebhookEndpoint>();

// The secret is in the 201 only; reading answers endpoints without it.
type Created = ServerInferResponses<typeof contract.createWebhook>;
expectTypeOf<Created['status']>().toEqualTypeOf<
  201 | 400 | 401 | 403 | 408 | 409 | 413 | 415 | 422 | 429 | 431 | 500 | 503
>();
expectTypeOf<Extract<Created, { status: 201 }>['body']>().toEqualTypeOf<CreatedWebhookEndpoint>();
expectTypeOf<CreatedWebhookEndpoint['secret']>().toEqualTypeOf<string>();
expectTypeOf<WebhookEndpoint>().not.toHaveProperty('secret');
// Why a disabled endpoint is disabled; absent while it is enabled.
expectTypeOf<WebhookEndpoint['disabledReason']>().toEqualTypeOf<string | undefined>();
expectTypeOf<
  Extract<ServerInferResponses<typeof contract.getWebhook>, { status: 200 }>['body']
>().toEqualTypeOf<WebhookEndpoint>();

// Deleting answers 204 with no body, or 404.
type Deleted = ServerInferResponses<typeof contract.deleteWebhook>;
expectTypeOf<Extract<Deleted, { status: 204 }>['body']>().toEqualTypeOf<undefined>();
expectTypeOf<404>().toExtend<Deleted['status']>();

// A delivery's plant id is an int64, kept exact as a bigint beyond 2^53.
expectTypeOf<WebhookDelivery['plantId']>().toEqualTypeOf<number | bigint>();
expectTypeOf<WebhookDelivery['status']>().toEqualTypeOf<'pending' | 'delivered' | 'failed'>();
// Deliveries page through `before`, the last delivery's id, as the Link header gives it.
expectTypeOf<ClientInferRequest<typeof contract.listWebhookDeliveries>['query']>().toEqualTypeOf<{
  limit?: string | undefined;
  before?: string | undefined;
}>();

// PATCH takes any of url, description (null removes it), enabled, eventTypes, payloadFormat and
// rateLimit (null removes it), and answers the endpoint.
expectTypeOf<ClientInferRequest<typeof contract.updateWebhook>['body']>().toEqualTypeOf<{
  url?: string | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
  eventTypes?: ('newPlant' | 'plantDeleted')[] | undefined;
  payloadFormat?: 'plain' | 'standard' | undefined;
  rateLimit?: number | null | undefined;
}>();
expectTypeOf<WebhookEndpoint['rateLimit']>().toEqualTypeOf<number | undefined>();
expectTypeOf<
  Extract<ServerInferResponses<typeof contract.updateWebhook>, { status: 200 }>['body']
>().toEqualTypeOf<WebhookEndpoint>();
// Rotation answers the new secret only; recover answers 202 with a count; retry 202 without body.
expectTypeOf<
  Extract<ServerInferResponses<typeof contract.rotateWebhookSecret>, { status: 200 }>['body']
>().toEqualTypeOf<{ secret: string }>();
expectTypeOf<ClientInferRequest<typeof contract.recoverWebhook>['body']>().toEqualTypeOf<{ since: string }>();
expectTypeOf<Extract<ServerInferResponses<typeof contract.recoverWebhook>, { status: 202 }>['body']>().toEqualTypeOf<{
  requeued: number;
}>();
expectTypeOf<
  Extract<ServerInferResponses<typeof contract.retryWebhookDelivery>, { status: 202 }>['body']
>().toEqualTypeOf<undefined>();
expectTypeOf<ClientInferRequest<typeof contract.retryWebhookDelivery>['params']>().toEqualTypeOf<{
  id: string;
  deliveryId: string;
}>();
// Every operation added for webhooks declares the scope it needs.
expectTypeOf<(typeof contract)['updateWebhook']['metadata']>().toEqualTypeOf<{ readonly scope: 'webhooks:write' }>();
expectTypeOf<(typeof contract)['rotateWebhookSecret']['metadata']>().toEqualTypeOf<{
  readonly scope: 'webhooks:write';
}>();
expectTypeOf<(typeof contract)['recoverWebhook']['metadata']>().toEqualTypeOf<{ readonly scope: 'webhooks:write' }>();
expectTypeOf<(typeof contract)['retryWebhookDelivery']['metadata']>().toEqualTypeOf<{
  readonly scope: 'webhooks:write';
}>();

// The POSTs that are not idempotent by themselves take an Idempotency-Key; the others do not.
expectTypeOf<ClientInferRequest<typeof contract.createWebhook>['headers']>().toHaveProperty('idempotency-key');
expectTypeOf<ClientInferRequest<typeof contract.rotateWebhookSecret>['headers']>().toHaveProperty('idempotency-key');
expectTypeOf<ClientInferRequest<typeof contract.recoverWebhook>['headers']>().toHaveProperty('idempotency-key');
