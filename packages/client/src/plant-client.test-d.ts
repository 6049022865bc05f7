import type { NewPlant, Plant, PlantContract, PlantWithId, WebhookDelivery } from '@org/plant-contract';
import type { AppRoute, ClientInferRequest, ClientInferResponseBody } from '@ts-rest/core';
import { expectTypeOf } from 'vitest';
import {
  type InternalServerError,
  NotFoundError,
  type PlantApiError,
  type PlantClientError,
  PlantTimeoutError,
  type RateLimitError,
  type ServiceUnavailableError,
} from './errors.ts';
import type { PagePromise, PlantPage } from './page.ts';
import { createPlantClient, type RequestOptions } from './plant-client.ts';
import type { WithResponse } from './plant-promise.ts';

const client = createPlantClient({ baseUrl: 'https://plants.example.com', token: 't' });

/** The contract's request body of a route, and its response body under a status. */
type RequestBody<Name extends keyof PlantContract> =
  ClientInferRequest<PlantContract[Name]> extends { body: infer Body } ? Body : never;
type ResponseBody<
  Name extends keyof PlantContract,
  Status extends number,
> = PlantContract[Name] extends infer Route extends AppRoute
  ? ClientInferResponseBody<Route, Status & keyof Route['responses']>
  : never;

// createPlant takes the contract's request body and resolves to the contract's 200 body.
expectTypeOf(client.createPlant).parameter(0).toEqualTypeOf<NewPlant>();
expectTypeOf(client.createPlant).parameter(0).toEqualTypeOf<RequestBody<'createPlant'>>();
expectTypeOf(client.createPlant).returns.resolves.toEqualTypeOf<Plant>();
expectTypeOf(client.createPlant).returns.resolves.toEqualTypeOf<ResponseBody<'createPlant', 200>>();

expectTypeOf(client.createPlant({ id: 1, name: 'Fern' })).resolves.toEqualTypeOf<Plant>();
expectTypeOf(client.createPlant({ id: 9007199254740993n, name: 'Fern', tag: 'fern' })).resolves.toEqualTypeOf<Plant>();
expectTypeOf(
  client.createPlant({ id: 1, name: 'Fern' }, { signal: AbortSignal.timeout(1) }),
).resolves.toEqualTypeOf<Plant>();

// @ts-expect-error name is required
void client.createPlant({ id: 1 });
// @ts-expect-error the id is a number or bigint, never a string
void client.createPlant({ id: '1', name: 'Fern' });
// @ts-expect-error the id is required
void client.createPlant({ name: 'Fern' });
// @ts-expect-error tag is a string or absent
void client.createPlant({ id: 1, name: 'Fern', tag: 3 });

// @ts-expect-error a token is required
createPlantClient({ baseUrl: 'https://plants.example.com' });

// Reading follows the contract's 200 bodies, so a change to PlantWithId reaches the client.
expectTypeOf(client.getPlant).returns.resolves.toEqualTypeOf<PlantWithId>();
expectTypeOf(client.getPlant).returns.resolves.toEqualTypeOf<ResponseBody<'getPlant', 200>>();
expectTypeOf(client.listPlants()).toEqualTypeOf<PagePromise<PlantWithId>>();
expectTypeOf(client.listPlants()).toExtend<AsyncIterable<PlantWithId>>();
expectTypeOf(client.listPlants()).resolves.toEqualTypeOf<PlantPage<PlantWithId>>();
expectTypeOf<PlantPage<PlantWithId>['data']>().toEqualTypeOf<PlantWithId[]>();
expectTypeOf<PlantPage<PlantWithId>['nextCursor']>().toEqualTypeOf<string | undefined>();
expectTypeOf(client.listPlants().withResponse()).resolves.toEqualTypeOf<WithResponse<PlantPage<PlantWithId>>>();
// @ts-expect-error a cursor carries the tag: not both
void client.listPlants({ cursor: 'after=1', tag: 'x' }).catch(() => undefined);
expectTypeOf<PlantWithId[]>().toEqualTypeOf<ResponseBody<'listPlants', 200>>();
expectTypeOf(client.deletePlant).returns.resolves.toEqualTypeOf<void>();
expectTypeOf(client.getPlant).parameter(0).toEqualTypeOf<number | bigint>();
// @ts-expect-error ids are numbers or bigints, never strings
void client.getPlant('1');
// @ts-expect-error the page size is a number
void client.listPlants({ pageSize: '10' });

// Timeouts and retries, per client and per call.
createPlantClient({ baseUrl: 'https://plants.example.com', token: 't', timeoutMs: 5_000, maxRetries: 0 });
expectTypeOf(client.getPlant).parameter(1).toEqualTypeOf<RequestOptions | undefined>();
expectTypeOf<RequestOptions>().branded.toEqualTypeOf<{
  signal?: AbortSignal;
  headers?: Readonly<Record<string, string>>;
  timeoutMs?: number;
  maxRetries?: number;
}>();

// Every method's promise also gives the answer it came from.
expectTypeOf(client.getPlant(1).withResponse()).resolves.toEqualTypeOf<{
  data: PlantWithId;
  response: Response;
  requestId: string | undefined;
}>();
expectTypeOf(client.deletePlant(1)).toExtend<Promise<void>>();

// The token may be a function, sync or async; headers are strings.
createPlantClient({ baseUrl: 'https://plants.example.com', token: () => 't' });
createPlantClient({ baseUrl: 'https://plants.example.com', token: async () => 't', defaultHeaders: { 'x-team': 'a' } });
// @ts-expect-error a token function gives a string
createPlantClient({ baseUrl: 'https://plants.example.com', token: () => 1 });
// @ts-expect-error header values are strings
createPlantClient({ baseUrl: 'https://plants.example.com', token: 't', defaultHeaders: { 'x-n': 1 } });
createPlantClient({ baseUrl: 'https://plants.example.com', token: 't', logger: console, logLevel: 'debug' });
// @ts-expect-error no such level
createPlantClient({ baseUrl: 'https://plants.example.com', token: 't', logLevel: 'verbose' });
void client.createPlant({ id: 1, name: 'Fern' }, { timeoutMs: 1_000, maxRetries: 5, signal: AbortSignal.timeout(1) });
void client.listPlants({ tag: 'a', maxRetries: 1 });
// @ts-expect-error maxRetries is a number
createPlantClient({ baseUrl: 'https://plants.example.com', token: 't', maxRetries: '2' });
// @ts-expect-error no such option: retries are `maxRetries`
void client.deletePlant(1, { retries: 1 });

// isInstance narrows to the class, with the response's fields.
declare const caught: unknown;
if (NotFoundError.isInstance(caught)) {
  expectTypeOf(caught).toEqualTypeOf<NotFoundError>();
  expectTypeOf(caught.status).toEqualTypeOf<number>();
  expectTypeOf(caught.requestId).toEqualTypeOf<string | undefined>();
  expectTypeOf(caught.headers).toEqualTypeOf<Headers>();
}
if (PlantTimeoutError.isInstance(caught)) {
  // @ts-expect-error timeouts have no response, so no status
  void caught.status;
}
expectTypeOf<ServiceUnavailableError>().toExtend<InternalServerError>();
expectTypeOf<RateLimitError>().toExtend<PlantApiError>();
expectTypeOf<PlantApiError>().toExtend<PlantClientError>();

// Webhook management follows the contract's routes too.
expectTypeOf(client.createWebhook).parameter(0).toEqualTypeOf<RequestBody<'createWebhook'>>();
expectTypeOf(client.createWebhook).returns.resolves.toEqualTypeOf<ResponseBody<'createWebhook', 201>>();
expectTypeOf(client.listWebhooks).returns.resolves.toEqualTypeOf<ResponseBody<'listWebhooks', 200>>();
expectTypeOf(client.getWebhook).returns.resolves.toEqualTypeOf<ResponseBody<'getWebhook', 200>>();
expectTypeOf<PlantPage<WebhookDelivery>['data']>().toEqualTypeOf<ResponseBody<'listWebhookDeliveries', 200>>();
expectTypeOf(client.listWebhookDeliveries('ep_1')).toEqualTypeOf<PagePromise<WebhookDelivery>>();
// @ts-expect-error an endpoint needs its url
client.createWebhook({ description: 'no url' });
expectTypeOf(client.updateWebhook).parameter(1).toEqualTypeOf<RequestBody<'updateWebhook'>>();
expectTypeOf(client.updateWebhook).returns.resolves.toEqualTypeOf<ResponseBody<'updateWebhook', 200>>();
expectTypeOf(client.rotateWebhookSecret).returns.resolves.toEqualTypeOf<ResponseBody<'rotateWebhookSecret', 200>>();
expectTypeOf(client.recoverWebhook).returns.resolves.toEqualTypeOf<ResponseBody<'recoverWebhook', 202>>();
expectTypeOf(client.retryWebhookDelivery).returns.resolves.toEqualTypeOf<void>();
// @ts-expect-error enabled is a boolean
client.updateWebhook('ep_1', { enabled: 'yes' });
