import type { ClientInferRequest, ServerInferResponses } from '@ts-rest/core';
import { expectTypeOf } from 'vitest';
import type { contract } from './contract.ts';
import type { CreatedWebhookEndpoint, NewWebhookEndpoint, WebhookDelivery, WebhookEndpoint } from './webhooks.ts';

expectTypeOf<NewWebhookEndpoint>().toEqualTypeOf<{ url: string; description?: string | undefined }>();
expectTypeOf<ClientInferRequest<typeof contract.createWebhook>['body']>().toEqualTypeOf<NewWebhookEndpoint>();

// The secret is in the 201 only; reading answers endpoints without it.
type Created = ServerInferResponses<typeof contract.createWebhook>;
expectTypeOf<Created['status']>().toEqualTypeOf<201 | 400 | 401 | 403 | 409 | 413 | 415 | 429 | 500 | 503>();
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
expectTypeOf<ClientInferRequest<typeof contract.listWebhookDeliveries>['query']>().toEqualTypeOf<{
  limit?: string | undefined;
}>();
