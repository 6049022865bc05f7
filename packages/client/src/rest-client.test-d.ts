import type { PlantContract } from '@org/plant-contract';
import type { ClientInferRequest, ClientInferResponses } from '@ts-rest/core';
import { expectTypeOf } from 'vitest';
import { createPlantRestClient } from './rest-client.ts';

const rest = createPlantRestClient({ baseUrl: 'https://plants.example.com', token: 't' });

// Every route of the contract, and nothing else.
expectTypeOf<keyof typeof rest>().toEqualTypeOf<keyof PlantContract>();

// Requests are the contract's: body, path parameters and query as ts-rest infers them.
expectTypeOf<Parameters<typeof rest.createPlant>[0]['body']>().toEqualTypeOf<
  ClientInferRequest<PlantContract['createPlant']>['body']
>();
expectTypeOf<Parameters<typeof rest.getPlant>[0]['params']>().toEqualTypeOf<
  ClientInferRequest<PlantContract['getPlant']>['params']
>();
// Every query parameter is optional, and so is the query.
expectTypeOf<NonNullable<Parameters<typeof rest.listPlants>[0]>['query']>().toEqualTypeOf<
  ClientInferRequest<PlantContract['listPlants']>['query'] | undefined
>();

// Answers are the contract's { status, body, headers } unions.
expectTypeOf(rest.createPlant).returns.resolves.toEqualTypeOf<ClientInferResponses<PlantContract['createPlant']>>();
expectTypeOf(rest.getPlant).returns.resolves.toEqualTypeOf<ClientInferResponses<PlantContract['getPlant']>>();
expectTypeOf(rest.listPlants).returns.resolves.toEqualTypeOf<ClientInferResponses<PlantContract['listPlants']>>();
expectTypeOf(rest.deletePlant).returns.resolves.toEqualTypeOf<ClientInferResponses<PlantContract['deletePlant']>>();

const answer = await rest.getPlant({ params: { id: '9007199254740993' } });
if (answer.status === 200) expectTypeOf(answer.body.id).toEqualTypeOf<number | bigint>();
// @ts-expect-error the contract lists no 418 (its status codes are strict)
if (answer.status === 418) void answer;

// bigint ids in bodies; the client's own options beside ts-rest's.
void rest.createPlant({ body: { id: 9007199254740993n, name: 'Fern' }, timeoutMs: 1_000, maxRetries: 0 });
void rest.listPlants({ fetchOptions: { signal: AbortSignal.timeout(1) } });
void rest.listPlants();
// @ts-expect-error path parameters are strings, as they are in the URL
void rest.getPlant({ params: { id: 1 } });
// @ts-expect-error the body is the contract's NewPlant
void rest.createPlant({ body: { id: 1 } });
// @ts-expect-error timeoutMs is a number
void rest.getPlant({ params: { id: '1' }, timeoutMs: '1' });
// @ts-expect-error a token is required
createPlantRestClient({ baseUrl: 'https://plants.example.com' });
