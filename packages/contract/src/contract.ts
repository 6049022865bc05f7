import { initContract } from '@ts-rest/core';
import { ApiError, NewPlant, Plant } from './schemas.ts';

const c = initContract();

export const contract = c.router(
  {
    createPlant: {
      method: 'POST',
      path: '/plants',
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
        404: ApiError,
        409: ApiError,
        413: ApiError,
        415: ApiError,
        500: ApiError,
        503: ApiError,
      },
    },
  },
  { strictStatusCodes: true },
);

export type PlantContract = typeof contract;
