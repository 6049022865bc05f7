import {
  ApiError,
  contract,
  type NewPlant,
  type Plant,
  type PlantContract,
  type PlantWithId,
  stringifyExactJson,
} from '@org/plant-contract';
import { type ClientInferRequest, convertQueryParamsToUrlString, insertParamsIntoPath } from '@ts-rest/core';
import { apiErrorFor, type PlantApiError, PlantClientError } from './errors.ts';
import { type ApiRequest, createFetcher, type FetchedAnswer, type FetchLike } from './fetcher.ts';
import { nextPageQuery } from './next-page.ts';
import { DEFAULT_MAX_RETRIES, type Outcome, withRetries } from './retry.ts';

export const DEFAULT_TIMEOUT_MS = 10_000;
export { DEFAULT_MAX_RETRIES };

/** Settings a client gives every request, and a single request may override. */
export type RetryOptions = {
  /**
   * Milliseconds each attempt may wait for its answer before it fails with PlantTimeoutError (and is
   * retried, while retries remain); default 10 000, `Infinity` for none.
   */
  timeoutMs?: number;
  /**
   * How many times a request is sent again after a connection error, a timeout, 408, 429 or 5xx;
   * default 2, `0` to fail at once.
   */
  maxRetries?: number;
};

export type PlantClientOptions = RetryOptions & {
  /** Where the API is reached, e.g. `https://plants.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** The bearer token sent as `Authorization: Bearer <token>`. */
  token: string;
  /** A `fetch` to use instead of the global one (for proxies, tests, instrumentation). */
  fetch?: FetchLike;
};

export type RequestOptions = RetryOptions & {
  /**
   * Cancels the request, including any wait before a retry; the promise then rejects with the
   * signal's reason, and nothing is retried.
   */
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
   * idempotent by id, which makes retries safe: sending the same plant again resolves again;
   * different data under an existing id throws a ConflictError (409).
   */
  createPlant(newPlant: NewPlant, options?: RequestOptions): Promise<Plant>;
  /** The plant stored under `id`; a missing one throws a NotFoundError (404). */
  getPlant(id: number | bigint, options?: RequestOptions): Promise<PlantWithId>;
  /**
   * Removes the plant stored under `id`; a missing one throws a NotFoundError (404) — unless an
   * earlier attempt of this call got no answer or a 5xx, when the 404 means that attempt most
   * likely deleted it, and the call resolves.
   */
  deletePlant(id: number | bigint, options?: RequestOptions): Promise<void>;
  /**
   * Every stored plant (or every one with `tag`), ordered by id, fetched page by page as the
   * iteration proceeds: `for await (const plant of client.listPlants()) …`.
   */
  listPlants(options?: ListPlantsOptions): AsyncIterableIterator<PlantWithId>;
};

const checkTimeout = (timeoutMs: number): number => {
  if (!(timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number of milliseconds or Infinity.');
  return timeoutMs;
};

const checkMaxRetries = (maxRetries: number): number => {
  if (!(Number.isSafeInteger(maxRetries) && maxRetries >= 0)) {
    throw new RangeError('maxRetries must be a whole number, 0 or more.');
  }
  return maxRetries;
};

const toApiError = (response: FetchedAnswer): PlantApiError => {
  const parsed = ApiError.safeParse(response.body);
  const message = parsed.success
    ? parsed.data.message
    : `HTTP ${response.status}${typeof response.body === 'string' && response.body ? `: ${response.body.slice(0, 200)}` : ''}`;
  return apiErrorFor({
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

/*
 * Method, path, statuses and 200 bodies come from the contract's routes; the lines that read them
 * fail to compile when the contract changes under them.
 */
const { createPlant: createRoute, getPlant: getRoute, deletePlant: deleteRoute, listPlants: listRoute } = contract;
const Created = createRoute.responses[200];
const Read = getRoute.responses[200];
const Page = listRoute.responses[200];
type CreateBody = ClientInferRequest<PlantContract['createPlant']>['body'];
const DELETED: keyof PlantContract['deletePlant']['responses'] = 204;
const NOT_FOUND: keyof PlantContract['deletePlant']['responses'] = 404;

/** A typed client for the Plant Store API, generated from @org/plant-contract. */
export const createPlantClient = (options: PlantClientOptions): PlantClient => {
  const defaults = {
    timeoutMs: checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    maxRetries: checkMaxRetries(options.maxRetries ?? DEFAULT_MAX_RETRIES),
  };
  const fetchOnce = createFetcher(options.fetch ?? ((input, init) => globalThis.fetch(input, init)));
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const authorization = `Bearer ${options.token}`;
  const createUrl = baseUrl + createRoute.path;

  /** Sends one call with the client's settings overridden by the call's, retrying as they allow. */
  const send = (
    request: ApiRequest,
    { signal, timeoutMs = defaults.timeoutMs, maxRetries = defaults.maxRetries }: RequestOptions,
  ): Promise<Outcome<FetchedAnswer>> => {
    const attempt = { timeoutMs: checkTimeout(timeoutMs), signal };
    return withRetries(() => fetchOnce(request, attempt), {
      maxRetries: checkMaxRetries(maxRetries),
      signal,
    });
  };

  return {
    async createPlant(newPlant, requestOptions = {}) {
      const unsafe = unsafeIdError(newPlant.id);
      if (unsafe) throw unsafe;
      // The route's body as the contract has it: a change that NewPlant does not follow fails here.
      const sent = newPlant satisfies CreateBody;
      // JSON.stringify cannot write a bigint; the exact writer costs more, so only bigints take it.
      const body = typeof sent.id === 'bigint' ? stringifyExactJson(sent) : JSON.stringify(sent);
      // Safe to retry: creation is idempotent by id, so a replay of a stored plant answers 200 again.
      const { answer } = await send(
        { method: createRoute.method, url: createUrl, authorization, body },
        requestOptions,
      );
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Created, answer.body, 'a Plant');
    },

    async getPlant(id, requestOptions = {}) {
      const url = baseUrl + insertParamsIntoPath({ path: getRoute.path, params: idParam(id) });
      const { answer } = await send({ method: getRoute.method, url, authorization }, requestOptions);
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Read, answer.body, 'a plant');
    },

    async deletePlant(id, requestOptions = {}) {
      const url = baseUrl + insertParamsIntoPath({ path: deleteRoute.path, params: idParam(id) });
      const { answer, afterUncertainAttempt } = await send(
        { method: deleteRoute.method, url, authorization },
        requestOptions,
      );
      if (answer.status === DELETED) return;
      // An earlier attempt that got no answer (or a 5xx) may well have deleted the plant, so a 404
      // now is the retry finding it gone, which is what the caller asked for.
      if (answer.status === NOT_FOUND && afterUncertainAttempt) return;
      throw toApiError(answer);
    },

    async *listPlants({ pageSize, tag, after, ...requestOptions } = {}) {
      let query: Record<string, string> | undefined = {};
      if (pageSize !== undefined) query.limit = String(pageSize);
      if (tag !== undefined) query.tag = tag;
      if (after !== undefined) query.after = idParam(after).id;
      while (query) {
        const url = baseUrl + listRoute.path + convertQueryParamsToUrlString(query);
        const { answer } = await send({ method: listRoute.method, url, authorization }, requestOptions);
        if (answer.status !== 200) throw toApiError(answer);
        yield* parseOrThrow(Page, answer.body, 'a list of plants');
        query = nextPageQuery(answer.headers.get('link'));
      }
    },
  };
};
