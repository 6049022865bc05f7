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
} from '@org/plant-contract';
import { apiErrorFor, type PlantApiError, PlantClientError } from './errors.ts';
import type { FetchedAnswer } from './fetcher.ts';
import { nextPageQuery } from './next-page.ts';
import type { PlantClientOptions, RequestOptions } from './options.ts';
import { afterUncertainAttempt } from './plant-api.ts';
import { initPlantRestClient } from './rest-client.ts';

export {
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type PlantClientOptions,
  type RequestOptions,
  type RetryOptions,
} from './options.ts';

export type ListPlantsOptions = RequestOptions & {
  /** Plants per request (1 to 1000; the server's default is 100). Iteration goes on across pages. */
  pageSize?: number;
  /** Only plants with exactly this tag. */
  tag?: string;
  /** Start after this id. */
  after?: number | bigint;
};

export type ListWebhookDeliveriesOptions = RequestOptions & {
  /** At most this many deliveries, newest first (1 to 1000; the server's default is 50). */
  limit?: number;
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
  /**
   * Subscribes a receiver to new plants and resolves with the endpoint and its signing `secret`,
   * which the API shows only in this answer: keep it to verify deliveries (`verifyPlantWebhook`
   * from `@org/plant-client/webhooks`). Registering is not idempotent (a second call makes a
   * second endpoint), so it is retried only when the caller asks for it with `maxRetries`.
   */
  createWebhook(endpoint: NewWebhookEndpoint, options?: RequestOptions): Promise<CreatedWebhookEndpoint>;
  /** The subscribed endpoints, without their secrets. */
  listWebhooks(options?: RequestOptions): Promise<WebhookEndpoint[]>;
  /** The endpoint registered under `id`; a missing one throws a NotFoundError (404). */
  getWebhook(id: string, options?: RequestOptions): Promise<WebhookEndpoint>;
  /** Unsubscribes the endpoint (a 404 after an uncertain earlier attempt resolves, as deletePlant does). */
  deleteWebhook(id: string, options?: RequestOptions): Promise<void>;
  /** The deliveries to the endpoint, newest first, with where each stands. */
  listWebhookDeliveries(id: string, options?: ListWebhookDeliveriesOptions): Promise<WebhookDelivery[]>;
  /**
   * Changes any of `url` (checked as at registration; a URL another endpoint has throws a
   * ConflictError), `description` (null removes it) and `enabled`, and resolves with the endpoint.
   * Enabling a disabled endpoint resumes the deliveries that disabling (or a 410 answer) stopped.
   */
  updateWebhook(id: string, changes: WebhookEndpointChanges, options?: RequestOptions): Promise<WebhookEndpoint>;
  /**
   * Gives the endpoint a new signing secret and resolves with it (shown only in this answer). For
   * the service's rotation grace (24 hours by default) deliveries are signed with both the new and
   * the previous secret. Not idempotent (a second call rotates again, and the first new secret then
   * signs only during the grace), so it is retried only when the caller asks for it with `maxRetries`.
   */
  rotateWebhookSecret(id: string, options?: RequestOptions): Promise<RotatedWebhookSecret>;
  /**
   * Attempts again the endpoint's failed deliveries announced at or after `since`, with their
   * original webhook-id, and resolves with how many are pending again (at most 10,000 a call: when
   * it is 10,000, call again for the rest). A disabled endpoint throws a ConflictError.
   */
  recoverWebhook(
    id: string,
    recovery: { since: Date | string },
    options?: RequestOptions,
  ): Promise<RequeuedWebhookDeliveries>;
  /** Attempts one delivery again now, whatever its status; an unknown one throws a NotFoundError. */
  retryWebhookDelivery(id: string, deliveryId: string, options?: RequestOptions): Promise<void>;
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

const idText = (id: number | bigint): string => {
  const unsafe = unsafeIdError(id);
  if (unsafe) throw unsafe;
  return String(id);
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

const NO_FETCH_OPTIONS = {};

/** The caller's signal where ts-rest carries it to the api: in `fetchOptions`. */
const fetchOptionsWith = (signal: AbortSignal | undefined) => (signal ? { signal } : NO_FETCH_OPTIONS);

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

/**
 * A typed client for the Plant Store API, generated from @org/plant-contract: each method is one
 * call of ts-rest's client for the contract (`createPlantRestClient`), its answer turned into the
 * contract's 200 body or a PlantApiError.
 */
export const createPlantClient = (options: PlantClientOptions): PlantClient => {
  // Unknown statuses (a proxy's 502) resolve here too, to become the error for their status.
  const rest = initPlantRestClient(options, { throwOnUnknownStatus: false });

  return {
    async createPlant(newPlant, { signal, timeoutMs, maxRetries } = {}) {
      const unsafe = unsafeIdError(newPlant.id);
      if (unsafe) throw unsafe;
      // Safe to retry: creation is idempotent by id, so a replay of a stored plant answers 200 again.
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.createPlant({ body: newPlant, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Created, answer.body, 'a Plant');
    },

    async getPlant(id, { signal, timeoutMs, maxRetries } = {}) {
      const params = { id: idText(id) };
      const answer = await rest.getPlant({ params, fetchOptions: fetchOptionsWith(signal), timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Read, answer.body, 'a plant');
    },

    async deletePlant(id, { signal, timeoutMs, maxRetries } = {}) {
      const params = { id: idText(id) };
      const answer = await rest.deletePlant({ params, fetchOptions: fetchOptionsWith(signal), timeoutMs, maxRetries });
      if (answer.status === 204) return;
      // An earlier attempt that got no answer (or a 5xx) may well have deleted the plant, so a 404
      // now is the retry finding it gone, which is what the caller asked for.
      if (answer.status === 404 && afterUncertainAttempt(answer)) return;
      throw toApiError(answer);
    },

    async *listPlants({ pageSize, tag, after, signal, timeoutMs, maxRetries } = {}) {
      let query: Record<string, string> | undefined = {};
      if (pageSize !== undefined) query.limit = String(pageSize);
      if (tag !== undefined) query.tag = tag;
      if (after !== undefined) query.after = idText(after);
      const fetchOptions = fetchOptionsWith(signal);
      while (query) {
        const answer = await rest.listPlants({ query, fetchOptions, timeoutMs, maxRetries });
        if (answer.status !== 200) throw toApiError(answer);
        yield* parseOrThrow(Page, answer.body, 'a list of plants');
        query = nextPageQuery(answer.headers.get('link'));
      }
    },

    async createWebhook(endpoint, { signal, timeoutMs, maxRetries = 0 } = {}) {
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.createWebhook({ body: endpoint, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 201) throw toApiError(answer);
      return parseOrThrow(CreatedEndpoint, answer.body, 'a created webhook endpoint');
    },

    async listWebhooks({ signal, timeoutMs, maxRetries } = {}) {
      const answer = await rest.listWebhooks({ fetchOptions: fetchOptionsWith(signal), timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Endpoints, answer.body, 'a list of webhook endpoints');
    },

    async getWebhook(id, { signal, timeoutMs, maxRetries } = {}) {
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.getWebhook({ params: { id }, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Endpoint, answer.body, 'a webhook endpoint');
    },

    async deleteWebhook(id, { signal, timeoutMs, maxRetries } = {}) {
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.deleteWebhook({ params: { id }, fetchOptions, timeoutMs, maxRetries });
      if (answer.status === 204) return;
      if (answer.status === 404 && afterUncertainAttempt(answer)) return;
      throw toApiError(answer);
    },

    async listWebhookDeliveries(id, { limit, signal, timeoutMs, maxRetries } = {}) {
      const query = limit === undefined ? {} : { limit: String(limit) };
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.listWebhookDeliveries({ params: { id }, query, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Deliveries, answer.body, 'a list of webhook deliveries');
    },

    async updateWebhook(id, changes, { signal, timeoutMs, maxRetries } = {}) {
      // Safe to retry: the same changes again leave the endpoint as the first attempt did.
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.updateWebhook({ params: { id }, body: changes, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Endpoint, answer.body, 'a webhook endpoint');
    },

    async rotateWebhookSecret(id, { signal, timeoutMs, maxRetries = 0 } = {}) {
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.rotateWebhookSecret({ params: { id }, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 200) throw toApiError(answer);
      return parseOrThrow(Rotated, answer.body, 'a new webhook secret');
    },

    async recoverWebhook(id, { since }, { signal, timeoutMs, maxRetries } = {}) {
      const body = { since: since instanceof Date ? since.toISOString() : since };
      const fetchOptions = fetchOptionsWith(signal);
      const answer = await rest.recoverWebhook({ params: { id }, body, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 202) throw toApiError(answer);
      return parseOrThrow(Requeued, answer.body, 'a webhook recovery');
    },

    async retryWebhookDelivery(id, deliveryId, { signal, timeoutMs, maxRetries } = {}) {
      const fetchOptions = fetchOptionsWith(signal);
      const params = { id, deliveryId };
      const answer = await rest.retryWebhookDelivery({ params, fetchOptions, timeoutMs, maxRetries });
      if (answer.status !== 202) throw toApiError(answer);
    },
  };
};
