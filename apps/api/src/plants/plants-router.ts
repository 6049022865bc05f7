import {
  contract,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_PAGE_MAX_BYTES,
  toStoredPlant,
  withoutId,
} from '@org/plant-contract';
import { initServer } from '@ts-rest/express';
import { clientKey } from '../auth/bearer-auth.ts';
import { type AnswerBudget, answerBudget } from '../http/answer-budget.ts';
import { jsonBody } from '../http/json-body.ts';
import type { ListOptions, PlantStore, StoredPlant } from '../store/plant-store.ts';
import { listBytes, plantBytes } from '../store/row-bytes.ts';

const s = initServer();

/**
 * A page ends once its plants' JSON holds this many bytes (UTF-8), whatever `limit` says (the
 * contract's document says so): the store then sends no more than that across, and the `Link`
 * header gives the rest.
 */
export const PAGE_BYTES = LIST_PAGE_MAX_BYTES;

/** The reservation of the largest page (`limit` at its maximum, and the row that tells of a next page). */
export const LARGEST_PAGE_BYTES = listBytes({ limit: LIST_LIMIT_MAX + 1, maxBytes: PAGE_BYTES });

/** What an answer holds besides the plants' JSON, per plant: the comma between them, or a bracket. */
const PLANT_FRAME_BYTES = 2;

const notFound = (id: bigint) => ({ status: 404 as const, body: { error: 404, message: `No plant has id ${id}.` } });

/**
 * The next page as a relative reference (`?limit=…&after=…`), which resolves against the request's
 * own URL, so it stays right behind a proxy that mounts the API under a prefix.
 */
const nextPageLink = ({ limit, tag }: ListOptions, after: bigint): string => {
  const query = new URLSearchParams({ limit: String(limit), after: String(after) });
  if (tag !== undefined) query.set('tag', tag);
  return `<?${query}>; rel="next"`;
};

/**
 * The contract's plant routes. Only creation takes a body: it is read after authentication (ts-rest
 * runs the global middleware first), so an unauthenticated client cannot make the service read one.
 */
const { createPlant, listPlants, getPlant, deletePlant } = contract;

export type PlantsRouterOptions = {
  bodyLimit?: number | undefined;
  /** Shared with the other lists; by default one of this router's own. */
  answers?: AnswerBudget | undefined;
};

export const createPlantsRouter = (
  store: PlantStore,
  { bodyLimit, answers = answerBudget() }: PlantsRouterOptions = {},
) =>
  s.router(
    { createPlant, listPlants, getPlant, deletePlant },
    {
      createPlant: {
        middleware: jsonBody(bodyLimit),
        handler: async ({ body }) => {
          const plant = toStoredPlant(body);
          const result = await store.create(plant);
          if (result.outcome === 'conflict') {
            return {
              status: 409,
              body: { error: 409, message: `A plant with id ${plant.id} already exists with different data.` },
            };
          }
          return { status: 200, body: withoutId(result.plant) };
        },
      },

      listPlants: async ({ query, req, res }) => {
        const options: ListOptions = { limit: query.limit ?? LIST_LIMIT_DEFAULT };
        if (query.after !== undefined) options.after = query.after;
        if (query.tag !== undefined) options.tag = query.tag;
        // One extra row tells whether a next page exists, so no empty last page is announced.
        const asked: ListOptions = { ...options, limit: options.limit + 1, maxBytes: PAGE_BYTES };
        const reservation = answers.reserve(res, listBytes(asked), clientKey(req, res));
        const plants = await store.list(asked);
        // The page ends at `limit` plants, or at the plant that brings it to PAGE_BYTES.
        let end = 0;
        let bytes = 0;
        while (end < plants.length && end < options.limit && bytes < PAGE_BYTES) {
          bytes += plantBytes(plants[end] as StoredPlant);
          end += 1;
        }
        const page = plants.slice(0, end);
        reservation.shrink(bytes + end * PLANT_FRAME_BYTES);
        const last = page.at(-1);
        if (plants.length > end && last) res.setHeader('Link', nextPageLink(options, last.id));
        return { status: 200, body: page };
      },

      getPlant: async ({ params }) => {
        const plant = await store.get(params.id);
        return plant ? { status: 200, body: plant } : notFound(params.id);
      },

      deletePlant: async ({ params }) => {
        const deleted = await store.delete(params.id);
        return deleted ? { status: 204, body: undefined } : notFound(params.id);
      },
    },
  );
