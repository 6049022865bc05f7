import { contract, type NewPlant } from '@org/plant-contract';
import { type createExpressEndpoints, initServer } from '@ts-rest/express';
import { expectTypeOf } from 'vitest';
import type { createWebhooksRouter } from '../webhooks/endpoints/webhooks-router.ts';
import type { createPlantsRouter } from './plants-router.ts';

const s = initServer();

/** What createExpressEndpoints accepts as the implementation of the contract. */
type Implementation = Parameters<typeof createExpressEndpoints<typeof contract>>[1];

// The service's router implements the contract; a contract change its handler does not follow fails here.
type Routers = ReturnType<typeof createPlantsRouter> & ReturnType<typeof createWebhooksRouter>;
expectTypeOf<Routers>().toExtend<Implementation>();
/** The service's routers with createPlant's handler replaced by one answering `Body` with 200. */
type WithCreatePlantAnswering<Body> = Omit<Routers, 'createPlant'> & {
  createPlant: () => Promise<{ status: 200; body: Body }>;
};
// Every other route as it is: a handler answering a Plant still implements the contract …
expectTypeOf<WithCreatePlantAnswering<{ name: string }>>().toExtend<Implementation>();
// … and one answering something else with 200 does not.
expectTypeOf<WithCreatePlantAnswering<{ id: 1 }>>().not.toExtend<Implementation>();

// A handler gets the contract's NewPlant as its body.
s.route(contract.createPlant, async ({ body }) => {
  expectTypeOf(body).toEqualTypeOf<NewPlant>();
  return { status: 200, body: { name: body.name } };
});

// Every declared failure status may be answered with an ApiError.
s.route(contract.createPlant, async () => ({
  status: 409,
  body: { error: 409, message: 'A plant with id 1 already exists.' },
}));

// @ts-expect-error a 200 must answer a Plant, which has a name
s.route(contract.createPlant, async () => ({ status: 200, body: { title: 'Fern' } }));

// @ts-expect-error a 409 must answer an ApiError, not a Plant
s.route(contract.createPlant, async () => ({ status: 409, body: { name: 'Fern' } }));

// @ts-expect-error the error code is a number
s.route(contract.createPlant, async () => ({ status: 400, body: { error: '400', message: 'bad' } }));

// @ts-expect-error 418 is not a status of the contract
s.route(contract.createPlant, async () => ({ status: 418, body: { error: 418, message: 'teapot' } }));

// @ts-expect-error 201 is not declared either: creation answers 200
s.route(contract.createPlant, async () => ({ status: 201, body: { name: 'Fern' } }));

// @ts-expect-error every route of the contract must be implemented
s.router(contract, { createPlant: async () => ({ status: 200, body: { name: 'Fern' } }) });

// Reading: the path id arrives parsed to an exact bigint, the query with its defaults left to the handler.
s.route(contract.getPlant, async ({ params }) => {
  expectTypeOf(params.id).toEqualTypeOf<bigint>();
  return { status: 200, body: { id: params.id, name: 'Fern' } };
});
s.route(contract.listPlants, async ({ query }) => {
  expectTypeOf(query.limit).toEqualTypeOf<number | undefined>();
  expectTypeOf(query.after).toEqualTypeOf<bigint | undefined>();
  return { status: 200, body: [{ id: 1n, name: 'Fern' }] };
});
// @ts-expect-error a listed plant carries its id
s.route(contract.listPlants, async () => ({ status: 200, body: [{ name: 'Fern' }] }));
// @ts-expect-error GET /plants answers an array, not one plant
s.route(contract.listPlants, async () => ({ status: 200, body: { id: 1n, name: 'Fern' } }));
s.route(contract.deletePlant, async () => ({ status: 204, body: undefined }));
// @ts-expect-error deletion answers 204, not 200
s.route(contract.deletePlant, async () => ({ status: 200, body: { id: 1n, name: 'Fern' } }));
