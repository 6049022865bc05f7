import { ApiError, contract, exactJsonReplacer, type NewPlant, Plant, PlantWithId } from '@org/plant-contract';
import { initClient } from '@ts-rest/core';
import { PlantApiError, PlantClientError } from './errors.ts';
import { createFetcher, type FetchLike } from './fetcher.ts';
import { nextPageQuery } from './next-page.ts';

export const DEFAULT_TIMEOUT_MS = 10_000;

export type PlantClientOptions = {
  /** Where the API is reached, e.g. `https://plants.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** The bearer token sent as `Authorization: Bearer <token>`. */
  token: string;
  /** A `fetch` to use instead of the global one (for proxies, tests, instrumentation). */
  fetch?: FetchLike;
  /** Milliseconds to wait for an answer before throwing PlantTimeoutError; default 10 000, `Infinity` for none. */
  timeoutMs?: number;
};

export type RequestOptions = {
  /** Cancels the request; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
};

export type ListPlantsOptions = RequestOptions & {
  /** Plants per request (1 to 1000; the server's default is 100). Iteration goes on across pages. */
  pageSize?: number;
  /** Only plants with exactly this tag. */
  tag?: string;
  /** Start after this id. */
  after?: number | bigint;
};

export type PlantClient = {
  /**
   * Stores a plant under `newPlant.id` and resolves with it as the API answers it. Creation is
   * idempotent by id: sending the same plant again resolves again; different data under an
   * existing id throws a PlantApiError with status 409.
   */
  createPlant(newPlant: NewPlant, options?: RequestOptions): Promise<Plant>;
  /** The plant stored under `id`; a missing one throws a PlantApiError with status 404. */
  getPlant(id: number | bigint, options?: RequestOptions): Promise<PlantWithId>;
  /** Removes the plant stored under `id`; a missing one throws a PlantApiError with status 404. */
  deletePlant(id: number | bigint, options?: RequestOptions): Promise<void>;
  /**
   * Every stored plant (or every one with `tag`), ordered by id, fetched page by page as the
   * iteration proceeds: `for await (const plant of client.listPlants()) …`.
   */
  listPlants(options?: ListPlantsOptions): AsyncIterableIterator<PlantWithId>;
};

const fetchOptions = ({ signal }: RequestOptions): { signal?: AbortSignal } => (signal ? { signal } : {});

const toApiError = (response: { status: number; body: unknown; headers: Headers }): PlantApiError => {
  const parsed = ApiError.safeParse(response.body);
  const message = parsed.success
    ? parsed.data.message
    : `HTTP ${response.status}${typeof response.body === 'string' && response.body ? `: ${response.body.slice(0, 200)}` : ''}`;
  return new PlantApiError({
    status: response.status,
    code: parsed.success ? parsed.data.error : response.status,
    message,
    headers: response.headers,
  });
};

const unsafeIdError = (id: number | bigint): PlantClientError | undefined =>
  typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id)
    ? // Beyond 2^53 a number may already be rounded; the server could not tell, so refuse here.
      new PlantClientError(`id ${id} is not a safe integer: pass ids beyond ±(2^53 − 1) as bigint.`)
    : undefined;

const idParam = (id: number | bigint): { id: string } => {
  const unsafe = unsafeIdError(id);
  if (unsafe) throw unsafe;
  return { id: String(id) };
};

const parseOrThrow = <T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  body: unknown,
  what: string,
): T => {
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new PlantClientError(`The API answered 200 with a body that is not ${what}.`);
  return parsed.data;
};

const PlantPage = PlantWithId.array();

/** A typed client for the Plant Store API, generated from @org/plant-contract. */
export const createPlantClient = (options: PlantClientOptions): PlantClient => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be a positive number of milliseconds or Infinity.`);
  const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const client = initClient(contract, {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    baseHeaders: { authorization: `Bearer ${options.token}` },
    api: createFetcher(fetchImpl, timeoutMs),
  });

  return {
    async createPlant(newPlant, requestOptions = {}) {
      const unsafe = unsafeIdError(newPlant.id);
      if (unsafe) throw unsafe;
      // ts-rest serialises with JSON.stringify, which cannot write a bigint: hand it one it can.
      const body = { ...newPlant, id: exactJsonReplacer('id', newPlant.id) } as NewPlant;
      const response = await client.createPlant({ body, fetchOptions: fetchOptions(requestOptions) });
      if (response.status !== 200) throw toApiError(response);
      return parseOrThrow(Plant, response.body, 'a Plant');
    },

    async getPlant(id, requestOptions = {}) {
      const response = await client.getPlant({ params: idParam(id), fetchOptions: fetchOptions(requestOptions) });
      if (response.status !== 200) throw toApiError(response);
      return parseOrThrow(PlantWithId, response.body, 'a plant');
    },

    async deletePlant(id, requestOptions = {}) {
      const response = await client.deletePlant({ params: idParam(id), fetchOptions: fetchOptions(requestOptions) });
      if (response.status !== 204) throw toApiError(response);
    },

    async *listPlants({ pageSize, tag, after, ...requestOptions } = {}) {
      let query: Record<string, string> | undefined = {};
      if (pageSize !== undefined) query.limit = String(pageSize);
      if (tag !== undefined) query.tag = tag;
      if (after !== undefined) query.after = idParam(after).id;
      while (query) {
        const response = await client.listPlants({ query, fetchOptions: fetchOptions(requestOptions) });
        if (response.status !== 200) throw toApiError(response);
        yield* parseOrThrow(PlantPage, response.body, 'a list of plants');
        query = nextPageQuery(response.headers.get('link'));
      }
    },
  };
};
