import {
  ApiError,
  type CreatedWebhookEndpoint,
  contract,
  type NewPlant,
  type NewWebhookEndpoint,
  type Plant,
  type PlantWithId,
  type RequeuedWebhookDeliveries,
  type RotatedWebhookSecret,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEventType,
  type WebhookTestResult,
} from '@org/plant-contract';
import { apiErrorFor, type PlantApiError, PlantClientError } from './errors.ts';
import type { FetchedAnswer } from './fetcher.ts';
import { nextPageQuery } from './next-page.ts';
import type { PlantClientOptions, RequestOptions } from './options.ts';
import { type PageAnswer, type PagePromise, requestPage } from './page.ts';
import { afterUncertainAttempt } from './plant-api.ts';
import { PlantPromise, type WithResponse } from './plant-promise.ts';
import { initPlantRestClient } from './rest-client.ts';

export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type PlantClientOptions,
  type RequestOptions,
  type RetryOptions,
} from './options.ts';

export type ListPlantsOptions = RequestOptions &
  (
    | {
        /** Plants per page (1 to 1000; the server's default is 100). Iteration goes on across pages. */
        pageSize?: number;
        /** Only plants with exactly this tag. */
        tag?: string;
        /** Start after this id. */
        after?: number | bigint;
        cursor?: undefined;
      }
    | {
        /**
         * The page a `nextCursor` points at (say, kept for a "page N" screen). It carries the page
         * size, tag and position, so it comes alone, without `pageSize`, `tag` or `after`.
         */
        cursor: string;
        pageSize?: undefined;
        tag?: undefined;
        after?: undefined;
      }
  );

export type ListWebhookDeliveriesOptions = RequestOptions &
  (
    | {
        /** At most this many deliveries a page, newest first (1 to 1000; the server's default is 50). */
        limit?: number;
        cursor?: undefined;
      }
    | {
        /** The page a `nextCursor` points at; it carries the page size and position, so it comes alone. */
        cursor: string;
        limit?: undefined;
      }
  );

export type PlantClient = {
  /**
   * Stores a plant under `newPlant.id` and resolves with it as the API answers it. Creation is
   * idempotent by id, which makes retries safe: sending the same plant again resolves again;
   * different data under an existing id throws a ConflictError (409).
   */
  createPlant(newPlant: NewPlant, options?: RequestOptions): PlantPromise<Plant>;
  /** The plant stored under `id`; a missing one throws a NotFoundError (404). */
  getPlant(id: number | bigint, options?: RequestOptions): PlantPromise<PlantWithId>;
  /**
   * Removes the plant stored under `id`; a missing one throws a NotFoundError (404) — unless an
   * earlier attempt of this call got no answer or a 5xx, when the 404 means that attempt most
   * likely deleted it, and the call resolves.
   */
  deletePlant(id: number | bigint, options?: RequestOptions): PlantPromise<void>;
  /**
   * The stored plants (or those with `tag`), ordered by id. Awaited, it is the first page
   * (`{ data, nextCursor, hasNextPage(), getNextPage() }`); `for await (const plant of
   * client.listPlants())` goes through every plant, fetching page after page as it proceeds.
   */
  listPlants(options?: ListPlantsOptions): PagePromise<PlantWithId>;
  /**
   * Subscribes a receiver to new plants and resolves with the endpoint and its signing `secret`,
   * which the API shows only in this answer: keep it to verify deliveries (`verifyPlantWebhook`
   * from `@org/plant-client/webhooks`). Each call sends an Idempotency-Key, the same on its
   * retries, so it is retried like the other calls: a retry after a lost answer gets the first
   * answer, secret included, and registers nothing more.
   */
  createWebhook(endpoint: NewWebhookEndpoint, options?: RequestOptions): PlantPromise<CreatedWebhookEndpoint>;
  /** The subscribed endpoints, without their secrets. */
  listWebhooks(options?: RequestOptions): PlantPromise<WebhookEndpoint[]>;
  /** The endpoint registered under `id`; a missing one throws a NotFoundError (404). */
  getWebhook(id: string, options?: RequestOptions): PlantPromise<WebhookEndpoint>;
  /** Unsubscribes the endpoint (a 404 after an uncertain earlier attempt resolves, as deletePlant does). */
  deleteWebhook(id: string, options?: RequestOptions): PlantPromise<void>;
  /**
   * The deliveries to the endpoint, newest first, with where each stands. Awaited, it is the first
   * page; iterated (`for await`), it goes through every delivery, page after page, as `listPlants`.
   */
  listWebhookDeliveries(id: string, options?: ListWebhookDeliveriesOptions): PagePromise<WebhookDelivery>;
  /**
   * Changes any of `url` (checked as at registration; a URL another endpoint has throws a
   * ConflictError), `description` (null removes it) and `enabled`, and resolves with the endpoint.
   * Enabling a disabled endpoint resumes the deliveries that disabling (or a 410 answer) stopped.
   */
  updateWebhook(id: string, changes: WebhookEndpointChanges, options?: RequestOptions): PlantPromise<WebhookEndpoint>;
  /**
   * Gives the endpoint a new signing secret and resolves with it (shown only in this answer). For
   * the service's rotation grace (24 hours by default) deliveries are signed with both the new and
   * the previous secret. Each call sends an Idempotency-Key, the same on its retries, so a retry
   * after a lost answer gets the first new secret instead of rotating again.
   */
  rotateWebhookSecret(id: string, options?: RequestOptions): PlantPromise<RotatedWebhookSecret>;
  /**
   * Attempts again the endpoint's failed deliveries announced at or after `since`, with their
   * original webhook-id, and resolves with how many are pending again (at most 10,000 a call: when
   * it is 10,000, call again for the rest). A disabled endpoint throws a ConflictError.
   */
  recoverWebhook(
    id: string,
    recovery: { since: Date | string },
    options?: RequestOptions,
  ): PlantPromise<RequeuedWebhookDeliveries>;
  /** Attempts one delivery again now, whatever its status; an unknown one throws a NotFoundError. */
  retryWebhookDelivery(id: string, deliveryId: string, options?: RequestOptions): PlantPromise<void>;
  /**
   * Sends one signed test event to the endpoint now (`eventType`, by default its first subscribed
   * type; webhook-id `msg_test_…`) and resolves with what happened: `delivered` (a 2xx), the
   * receiver's `status`, `durationMs`, and `error` when it failed. A receiver that fails resolves;
   * only the call failing throws (404 unknown endpoint, 429 past 5 tests a minute). Each call sends
   * an Idempotency-Key, the same on its retries, so a retry after a lost answer gets the first
   * result instead of sending a second test.
   */
  testWebhook(
    id: string,
    test?: { eventType?: WebhookEventType },
    options?: RequestOptions,
  ): PlantPromise<WebhookTestResult>;
};

/** ts-rest hands back the api's answer object itself, so the fetched Response is still on it. */
const fetched = (answer: { status: number; headers: Headers; body: unknown }): FetchedAnswer => answer as FetchedAnswer;

const toApiError = (answer: { status: number; headers: Headers; body: unknown }): PlantApiError => {
  const parsed = ApiError.safeParse(answer.body);
  const message = parsed.success
    ? parsed.data.message
    : `HTTP ${answer.status}${typeof answer.body === 'string' && answer.body ? `: ${answer.body.slice(0, 200)}` : ''}`;
  return apiErrorFor({
    status: answer.status,
    code: parsed.success ? parsed.data.error : answer.status,
    message,
    headers: answer.headers,
  });
};

const withResponseOf = <T>(data: T, answer: { status: number; headers: Headers; body: unknown }): WithResponse<T> => ({
  data,
  response: fetched(answer).response,
  requestId: answer.headers.get('x-request-id') ?? undefined,
});

const unsafeIdError = (id: number | bigint): PlantClientError | undefined =>
  typeof id === 'number' && Number.isInteger(id) && !Number.isSafeInteger(id)
    ? // Beyond 2^53 a number may already be rounded; the server could not tell, so refuse here.
      new PlantClientError(`id ${id} is not a safe integer: pass ids beyond ±(2^53 − 1) as bigint.`)
    : undefined;

const idText = (id: number | bigint): string => {
  const unsafe = unsafeIdError(id);
  if (unsafe) throw unsafe;
  return String(id);
};

/**
 * A caller's id as one path segment: ts-rest inserts params as they are, so `'../plants/1'`,
 * `'a?b=1'` or `'a#b'` would reach another route (with the caller's token) or cut the path short.
 * An empty id drops its segment, and `.` or `..` (encoded or not, URLs resolve them) climbs out of
 * it, so those are refused.
 */
const segment = (id: string): string => {
  if (id === '' || id === '.' || id === '..') {
    throw new PlantClientError(`An id in the path cannot be ${JSON.stringify(id)}.`);
  }
  return encodeURIComponent(id);
};

const parseOrThrow = <T>(
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  answer: { status: number; body: unknown },
  what: string,
): T => {
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success) throw new PlantClientError(`The API answered ${answer.status} with a body that is not ${what}.`);
  return parsed.data;
};

const NO_FETCH_OPTIONS = {};
const NO_HEADERS = {};

/**
 * What every call hands ts-rest besides its params, query and body: the caller's signal where
 * ts-rest carries it to the api (`fetchOptions`), the call's own headers, timeout and retries.
 */
const callArgs = ({ signal, headers, timeoutMs, maxRetries }: RequestOptions) => ({
  fetchOptions: signal ? { signal } : NO_FETCH_OPTIONS,
  extraHeaders: headers ?? NO_HEADERS,
  timeoutMs,
  maxRetries,
});

/**
 * A fresh Idempotency-Key for one logical call of a POST that is not idempotent by itself: ts-rest
 * builds the headers once per call, so every retry of the call sends the same key.
 */
const idempotencyKey = () => ({ 'idempotency-key': globalThis.crypto.randomUUID() });

/** Starts `run` at once and gives its result as a PlantPromise (a synchronous throw rejects it). */
const call = <T>(run: () => Promise<WithResponse<T>>): PlantPromise<T> => new PlantPromise(run());

const pageQuery = ({ pageSize, tag, after, cursor }: ListPlantsOptions): Record<string, string> => {
  if (cursor !== undefined) {
    if (pageSize !== undefined || tag !== undefined || after !== undefined) {
      throw new RangeError('cursor carries the page size, tag and position: give it without pageSize, tag or after.');
    }
    return Object.fromEntries(new URLSearchParams(cursor));
  }
  const query: Record<string, string> = {};
  if (pageSize !== undefined) query.limit = String(pageSize);
  if (tag !== undefined) query.tag = tag;
  if (after !== undefined) query.after = idText(after);
  return query;
};

const cursorOf = (query: Record<string, string> | undefined): string | undefined =>
  query && new URLSearchParams(query).toString();

// The 200 bodies' schemas, from the contract's routes.
const Created = contract.createPlant.responses[200];
const Read = contract.getPlant.responses[200];
const Page = contract.listPlants.responses[200];
const CreatedEndpoint = contract.createWebhook.responses[201];
const Endpoints = contract.listWebhooks.responses[200];
const Endpoint = contract.getWebhook.responses[200];
const Deliveries = contract.listWebhookDeliveries.responses[200];
const Rotated = contract.rotateWebhookSecret.responses[200];
const Requeued = contract.recoverWebhook.responses[202];
const Tested = contract.testWebhook.responses[200];

/**
 * A typed client for the Plant Store API, generated from @org/plant-contract: each method is one
 * call of ts-rest's client for the contract (`createPlantRestClient`), its answer turned into the
 * contract's 200 body or a PlantApiError. Every method's promise also has `.withResponse()`.
 */
export const createPlantClient = (options: PlantClientOptions): PlantClient => {
  // Unknown statuses (a proxy's 502) resolve here too, to become the error for their status.
  const rest = initPlantRestClient(options, { throwOnUnknownStatus: false });

  return {
    createPlant: (newPlant, options = {}) =>
      call(async () => {
        const unsafe = unsafeIdError(newPlant.id);
        if (unsafe) throw unsafe;
        // Safe to retry: creation is idempotent by id, so a replay of a stored plant answers 200 again.
        const answer = await rest.createPlant({ body: newPlant, ...callArgs(options) });
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Created, answer, 'a Plant'), answer);
      }),

    getPlant: (id, options = {}) =>
      call(async () => {
        const answer = await rest.getPlant({ params: { id: idText(id) }, ...callArgs(options) });
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Read, answer, 'a plant'), answer);
      }),

    deletePlant: (id, options = {}) =>
      call(async () => {
        const answer = await rest.deletePlant({ params: { id: idText(id) }, ...callArgs(options) });
        // An earlier attempt that got no answer (or a 5xx) may well have deleted the plant, so a 404
        // now is the retry finding it gone, which is what the caller asked for.
        if (answer.status === 204 || (answer.status === 404 && afterUncertainAttempt(answer))) {
          return withResponseOf(undefined, answer);
        }
        throw toApiError(answer);
      }),

    listPlants: (options = {}) => {
      const args = callArgs(options);
      const fetchPage = async (cursor: string | undefined): Promise<PageAnswer<PlantWithId>> => {
        const query = cursor === undefined ? pageQuery(options) : pageQuery({ cursor });
        const answer = await rest.listPlants({ query, ...args });
        if (answer.status !== 200) throw toApiError(answer);
        const items = parseOrThrow(Page, answer, 'a list of plants');
        return withResponseOf({ items, nextCursor: cursorOf(nextPageQuery(answer.headers.get('link'))) }, answer);
      };
      return requestPage(fetchPage, undefined, options.signal);
    },

    createWebhook: (endpoint, options = {}) =>
      call(async () => {
        // Safe to retry: every attempt of this call carries its key, so a retry gets the first answer.
        const answer = await rest.createWebhook({ body: endpoint, headers: idempotencyKey(), ...callArgs(options) });
        if (answer.status !== 201) throw toApiError(answer);
        return withResponseOf(parseOrThrow(CreatedEndpoint, answer, 'a created webhook endpoint'), answer);
      }),

    listWebhooks: (options = {}) =>
      call(async () => {
        const answer = await rest.listWebhooks(callArgs(options));
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Endpoints, answer, 'a list of webhook endpoints'), answer);
      }),

    getWebhook: (id, options = {}) =>
      call(async () => {
        const answer = await rest.getWebhook({ params: { id: segment(id) }, ...callArgs(options) });
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Endpoint, answer, 'a webhook endpoint'), answer);
      }),

    deleteWebhook: (id, options = {}) =>
      call(async () => {
        const answer = await rest.deleteWebhook({ params: { id: segment(id) }, ...callArgs(options) });
        if (answer.status === 204 || (answer.status === 404 && afterUncertainAttempt(answer))) {
          return withResponseOf(undefined, answer);
        }
        throw toApiError(answer);
      }),

    listWebhookDeliveries: (id, options = {}) => {
      const args = callArgs(options);
      const first = options.limit === undefined ? {} : { limit: String(options.limit) };
      const fetchPage = async (cursor: string | undefined): Promise<PageAnswer<WebhookDelivery>> => {
        const query = cursor === undefined ? first : Object.fromEntries(new URLSearchParams(cursor));
        const answer = await rest.listWebhookDeliveries({ params: { id: segment(id) }, query, ...args });
        if (answer.status !== 200) throw toApiError(answer);
        const items = parseOrThrow(Deliveries, answer, 'a list of webhook deliveries');
        return withResponseOf({ items, nextCursor: cursorOf(nextPageQuery(answer.headers.get('link'))) }, answer);
      };
      return requestPage(fetchPage, options.cursor, options.signal);
    },

    updateWebhook: (id, changes, options = {}) =>
      call(async () => {
        // Safe to retry: the same changes again leave the endpoint as the first attempt did.
        const answer = await rest.updateWebhook({ params: { id: segment(id) }, body: changes, ...callArgs(options) });
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Endpoint, answer, 'a webhook endpoint'), answer);
      }),

    rotateWebhookSecret: (id, options = {}) =>
      call(async () => {
        const answer = await rest.rotateWebhookSecret({
          params: { id: segment(id) },
          headers: idempotencyKey(),
          ...callArgs(options),
        });
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Rotated, answer, 'a new webhook secret'), answer);
      }),

    recoverWebhook: (id, { since }, options = {}) =>
      call(async () => {
        const body = { since: since instanceof Date ? since.toISOString() : since };
        const answer = await rest.recoverWebhook({
          params: { id: segment(id) },
          body,
          headers: idempotencyKey(),
          ...callArgs(options),
        });
        if (answer.status !== 202) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Requeued, answer, 'a webhook recovery'), answer);
      }),

    testWebhook: (id, { eventType } = {}, options = {}) =>
      call(async () => {
        const answer = await rest.testWebhook({
          params: { id: segment(id) },
          body: eventType === undefined ? {} : { eventType },
          headers: idempotencyKey(),
          ...callArgs(options),
        });
        if (answer.status !== 200) throw toApiError(answer);
        return withResponseOf(parseOrThrow(Tested, answer, 'a webhook test result'), answer);
      }),

    retryWebhookDelivery: (id, deliveryId, options = {}) =>
      call(async () => {
        const answer = await rest.retryWebhookDelivery({
          params: { id: segment(id), deliveryId: segment(deliveryId) },
          ...callArgs(options),
        });
        if (answer.status !== 202) throw toApiError(answer);
        return withResponseOf(undefined, answer);
      }),
  };
};
