import { contract, type NewPlant } from '@org/plant-contract';
import { type createExpressEndpoints, initServer } from '@ts-rest/express';
import { expectTypeOf } from 'vitest';
import type { createPlantsRouter } from './plants-router.ts';

const s = initServer();

/** What createExpressEndpoints accepts as the implementation of the contract. */
type Implementation = Parameters<typeof createExpressEndpoints<typeof contract>>[1];

// The service's router implements the contract; a contract change its handler does not follow fails here.
expectTypeOf<ReturnType<typeof createPlantsRouter>>().toExtend<Implementation>();
expectTypeOf<{
  createPlant: { handler: () => Promise<{ status: 200; body: { id: 1 } }> };
}>().not.toExtend<Implementation>();

// A handler gets the contract's NewPlant as its body.
s.router(contract, {
  createPlant: async ({ body }) => {
    expectTypeOf(body).toEqualTypeOf<NewPlant>();
    return { status: 200, body: { name: body.name } };
  },
});

// Every declared failure status may be answered with an ApiError.
s.router(contract, {
  createPlant: async () => ({ status: 409, body: { error: 409, message: 'A plant with id 1 already exists.' } }),
});

s.router(contract, {
  // @ts-expect-error a 200 must answer a Plant, which has a name
  createPlant: async () => ({ status: 200, body: { title: 'Fern' } }),
});

s.router(contract, {
  // @ts-expect-error a 409 must answer an ApiError, not a Plant
  createPlant: async () => ({ status: 409, body: { name: 'Fern' } }),
});

s.router(contract, {
  // @ts-expect-error the error code is a number
  createPlant: async () => ({ status: 400, body: { error: '400', message: 'bad' } }),
});

s.router(contract, {
  // @ts-expect-error 418 is not a status of the contract
  createPlant: async () => ({ status: 418, body: { error: 418, message: 'teapot' } }),
});

s.router(contract, {
  // @ts-expect-error 201 is not declared either: creation answers 200
  createPlant: async () => ({ status: 201, body: { name: 'Fern' } }),
});

// @ts-expect-error createPlant must be implemented
s.router(contract, {});
