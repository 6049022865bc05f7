import { ApiError, contract, exactJsonReplacer, type NewPlant, Plant } from '@org/plant-contract';
import { initClient } from '@ts-rest/core';
import { PlantApiError, PlantClientError } from './errors.ts';
import { createFetcher, type FetchLike } from './fetcher.ts';

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

export type PlantClient = {
  /**
   * Stores a plant under `newPlant.id` and resolves with it as the API answers it. Creation is
   * idempotent by id: sending the same plant again resolves again; different data under an
   * existing id throws a PlantApiError with status 409.
   */
  createPlant(newPlant: NewPlant, options?: RequestOptions): Promise<Plant>;
};

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
      if (typeof newPlant.id === 'number' && Number.isInteger(newPlant.id) && !Number.isSafeInteger(newPlant.id)) {
        // Beyond 2^53 a number may already be rounded; the server could not tell, so refuse here.
        throw new PlantClientError(`id ${newPlant.id} is not a safe integer: pass ids beyond ±(2^53 − 1) as bigint.`);
      }
      // ts-rest serialises with JSON.stringify, which cannot write a bigint: hand it one it can.
      const body = { ...newPlant, id: exactJsonReplacer('id', newPlant.id) } as NewPlant;
      const response = await client.createPlant({
        body,
        fetchOptions: requestOptions.signal ? { signal: requestOptions.signal } : {},
      });
      if (response.status !== 200) throw toApiError(response);
      const plant = Plant.safeParse(response.body);
      if (!plant.success) throw new PlantClientError('The API answered 200 with a body that is not a Plant.');
      return plant.data;
    },
  };
};
