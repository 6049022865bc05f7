import { initContract } from '@ts-rest/core';
import { ListPlantsQuery, PlantIdParams } from './parameters.ts';
import { ApiError, NewPlant, Plant, PlantWithId } from './schemas.ts';

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
  },
  { strictStatusCodes: true },
);

export type PlantContract = typeof contract;
