import {
  type CreatedWebhookEndpoint,
  contract,
  DELIVERIES_LIMIT_DEFAULT,
  IDEMPOTENT_REPLAYED_HEADER,
  LIST_LIMIT_DEFAULT,
  NewPlant,
  type PlantContract,
  type PlantWithId,
  plantJson,
  type Scope,
  type StoredPlant,
  type StoredWebhookEndpoint,
  samePlant,
  stringifyExactJson,
  toStoredPlant,
  toWebhookEndpoint,
  validationMessage,
  WEBHOOK_ENDPOINTS_MAX,
  WEBHOOK_EVENT_DATA_JSON,
  WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES_DEFAULT,
  WEBHOOK_PREVIOUS_SECRETS_MAX,
  WEBHOOK_RECOVER_MAX,
  WEBHOOK_ROTATION_GRACE_DEFAULT_MS,
  WEBHOOK_TEST_ID_PREFIX,
  WEBHOOK_TESTS_PER_MINUTE,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEventType,
  type WebhookTestAnswer,
  webhookEventJson,
  webhookTestJson,
  webhookTestOutcome,
  webhookTestsLimited,
  withoutId,
} from '@org/plant-contract';
import type { ServerInferResponses } from '@ts-rest/core';
import type { ZodError } from 'zod';
import { type Answer, errorAnswer, Refusal, toResponse } from './answers.ts';
import { authorize, type FakePrincipal, type FakeToken } from './bearer-token.ts';
import { connectionError, type FaultOptions, Faults, faultAnswer, type PlantStoreFault, wait } from './faults.ts';
import { IdempotencyKeys } from './idempotency-keys.ts';
import { nextPageLink, pageOf } from './pagination.ts';
import { BODY_LIMIT_BYTES, readJsonBody } from './request-body.ts';
import { matchRoute, parseQuery, type RouteName } from './routes.ts';
import { newSecret, signedHeaders } from './webhook-signing.ts';
import { checkWebhookUrl } from './webhook-url.ts';

export type { FakeToken } from './bearer-token.ts';
export type { FaultOptions, PlantStoreFault } from './faults.ts';
export type { RouteName } from './routes.ts';

export type PlantStoreFakeOptions = {
  /**
   * The bearer tokens accepted, each a static token (may do everything) or `{ token, scopes }`
   * (only what its scopes grant, as a JWT's). By default any well-formed token is accepted; a
   * missing or malformed one is refused as the service refuses it either way.
   */
  tokens?: readonly FakeToken[];
  /** Plants stored from the start (as `seed` stores them). */
  plants?: readonly NewPlant[];
  /** The request body limit in bytes (PLANT_BODY_LIMIT_BYTES); the service's default by default. */
  bodyLimit?: number;
  /** As PLANT_WEBHOOKS_ALLOW_PRIVATE: webhook URLs may be plain http and name private addresses. */
  allowPrivateWebhooks?: boolean;
  /** How long a rotated-out secret still signs deliveries; 24 hours, as the service's default. */
  rotationGraceMs?: number;
  /** As PLANT_WEBHOOK_ENDPOINTS_MAX: webhook endpoints of all principals together; 1000, as the service's default. */
  webhookEndpointsMax?: number;
  /** The fake's clock (endpoint and delivery times, signature timestamps, rotation grace, the test limit). */
  now?: () => Date;
  /**
   * How POST /webhooks/{id}/test reaches the receiver: given the signed test delivery, resolves
   * how the receiver answered (`{ status }`, or `{ error }` when nothing came back). By default
   * the fake sends nothing and every test is answered `{ status: 200 }`; hand the delivery to
   * your receiver (or to `fetch`) to report its real answer.
   */
  sendTestDelivery?: (delivery: SignedDelivery) => Promise<WebhookTestAnswer>;
};

/** What the fake would deliver to one subscribed endpoint for one event. */
export type RecordedDelivery = {
  /** The delivery's webhook-id. */
  id: string;
  endpointId: string;
  /** The event announced: `newPlant` for a created plant, `plantDeleted` for a deleted one. */
  type: WebhookEventType;
  /** The endpoint's URL when the event was announced. */
  url: string;
  /** The plant the event is about, as it was stored: its data make the delivery's body (see `signDelivery`). */
  plant: PlantWithId;
  /** pending until `settleDelivery` says how the receiver answered (the fake sends nothing itself). */
  status: WebhookDelivery['status'];
  attempts: number;
  createdAt: Date;
};

/** One delivery as the service would POST it: sign it, then hand it to your receiver. */
export type SignedDelivery = {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
};

export type PlantStoreFake = {
  /** A `fetch` that answers as the service would, without a network: `createPlantClient({ fetch: fake.fetch })`. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /**
   * Answers one request as the service would (faults included: a lost answer or a connection error
   * rejects). `basePath` is the part of the path before the API's own (`/api` for `https://x/api`).
   */
  handle(request: Request, options?: { basePath?: string }): Promise<Response>;
  /** The stored plants ordered by id (ids beyond ±(2^53 − 1) as bigint). */
  readonly plants: PlantWithId[];
  /** Stores plants as they are (no webhook is announced); a plant the contract refuses throws, naming it. */
  seed(plants: readonly NewPlant[]): void;
  /** The registered webhook endpoints, oldest first, as GET /webhooks answers them. */
  readonly webhooks: WebhookEndpoint[];
  /** What the fake would deliver, newest first: to `endpointId`, or to every endpoint. */
  deliveries(endpointId?: string): RecordedDelivery[];
  /**
   * The delivery as the service would send it now: its JSON body in the endpoint's payload format
   * (the service's own function makes it), its Standard Webhooks headers and its event type,
   * signed with the endpoint's secret (and the previous one during a rotation's grace), so that
   * `verifyPlantWebhookEvent` accepts it.
   */
  signDelivery(delivery: RecordedDelivery, options?: { timestampSeconds?: number }): Promise<SignedDelivery>;
  /**
   * Records how the receiver took a delivery, as the service's worker would after an attempt:
   * `delivered`, or `failed` once every retry is spent (then `recoverWebhook` can requeue it). An
   * unknown delivery id throws.
   */
  settleDelivery(deliveryId: string, outcome: 'delivered' | 'failed'): void;
  /** The next call (or `times` calls, or calls of `route`) gets `fault`. An unknown route throws. */
  fail(fault: PlantStoreFault, options?: FaultOptions): void;
  clearFaults(): void;
  /** Forgets every plant, endpoint, delivery and fault, then stores the `plants` option's plants again. */
  reset(): void;
};

type StoredEndpoint = StoredWebhookEndpoint & {
  secret: string;
  /** The secrets rotated out, newest first, each signing until its grace ends. */
  previous: { secret: string; until: Date }[];
};

type StoredDelivery = RecordedDelivery & { deliveredAt?: Date };

const DISABLED_BY_REQUEST = 'Disabled by a PATCH request.';

/** The endpoint as answered to `principal`: its owner shown to administrators only. */
const shown = (endpoint: StoredEndpoint, principal: FakePrincipal) =>
  toWebhookEndpoint(endpoint, { showOwner: principal.admin });

/** Pending again, due now: what recover and retry make of a delivery. */
const requeue = (delivery: StoredDelivery) => {
  delivery.status = 'pending';
  delete delivery.deliveredAt;
};

const hex = (bytes: number): string =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((byte) => byte.toString(16).padStart(2, '0')).join('');

const exactId = (id: bigint): number | bigint => (Number.isSafeInteger(Number(id)) ? Number(id) : id);

const toPlantWithId = (plant: StoredPlant): PlantWithId => ({ ...plant, id: exactId(plant.id) });

const toDelivery = ({ id, type, plant, status, attempts, deliveredAt }: StoredDelivery): WebhookDelivery => ({
  id,
  plantId: plant.id,
  type,
  status,
  attempts,
  ...(deliveredAt !== undefined && { deliveredAt: deliveredAt.toISOString() }),
});

type Schema<T> = { safeParse(value: unknown): { success: true; data: T } | { success: false; error: ZodError } };

const parsed = <T>(schema: Schema<T>, value: unknown, where: string): T => {
  const result = schema.safeParse(value);
  if (!result.success) throw new Refusal(400, validationMessage(where, result.error));
  return result.data;
};

const sameRequestId = /^[\w.:-]{1,128}$/;

/** An answer the contract lists for the route, plus the headers it comes with. */
type RouteAnswer<Name extends RouteName> = ServerInferResponses<PlantContract[Name]> & {
  headers?: Record<string, string>;
};

/** What one route's handler is given. */
type Call = {
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** The JSON body, read before any validation (as the service's body middleware runs first); undefined for bodiless routes. */
  body: unknown;
  /** Who sent the request. */
  principal: FakePrincipal;
};

/** The route's headers schema; ts-rest gives `{}` to a route that declares none. */
const headersOf = (name: RouteName) =>
  (contract[name] as { headers?: unknown }).headers as
    | (Schema<unknown> & { shape?: Record<string, unknown> })
    | undefined;

/** Whether the route takes an Idempotency-Key header (the POSTs that are not idempotent by themselves). */
const takesIdempotencyKey = (name: RouteName): boolean => headersOf(name)?.shape?.['idempotency-key'] !== undefined;

/** Whether the route's JSON body may be left out (as the service's optionalJsonBody reads it). */
const bodyIsOptional = (name: RouteName): boolean => {
  const route = contract[name];
  return 'body' in route && (route.body as { isOptional?: () => boolean }).isOptional?.() === true;
};

/** Whether the route takes a JSON body (the others, `c.noBody()` or GET, are never read). */
const takesJson = (name: RouteName): boolean => {
  const route = contract[name];
  return 'body' in route && typeof (route.body as { safeParse?: unknown }).safeParse === 'function';
};

/**
 * An in-memory Plant Store that answers every route of @org/plant-contract as the service does:
 * the same validation and messages, limits, exact int64 ids, `Link` pages, idempotent creation,
 * webhook endpoint management, bearer token checks, and the `Error` body for every failure. It
 * does not model what needs a process or a disk (durability, metrics, admission, rate limits,
 * delivery attempts): faults on demand stand in for those.
 */
export const createPlantStoreFake = (options: PlantStoreFakeOptions = {}): PlantStoreFake => {
  const {
    tokens,
    bodyLimit = BODY_LIMIT_BYTES,
    allowPrivateWebhooks = false,
    rotationGraceMs = WEBHOOK_ROTATION_GRACE_DEFAULT_MS,
    webhookEndpointsMax = 1000,
    now = () => new Date(),
    sendTestDelivery = async () => ({ status: 200 }),
  } = options;
  const plants = new Map<bigint, StoredPlant>();
  let sorted: StoredPlant[] | undefined;
  const endpoints = new Map<string, StoredEndpoint>();
  let deliveries: StoredDelivery[] = [];
  const faults = new Faults();
  const idempotencyKeys = new IdempotencyKeys(now);
  /**
   * The test deliveries' windows by endpoint URL, as the service keeps them (it keys them by the
   * principal too): WEBHOOK_TESTS_PER_MINUTE from a window's first test for a minute, across deleting
   * the endpoint and registering its URL again.
   */
  const testWindows = new Map<string, { startedAt: number; tests: number }>();
  const instance = hex(8);
  let deliverySeq = 0;

  const sortedPlants = (): StoredPlant[] => {
    sorted ??= [...plants.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    return sorted;
  };
  const store = (plant: StoredPlant) => {
    plants.set(plant.id, plant);
    sorted = undefined;
  };

  const seed = (newPlants: readonly NewPlant[]) => {
    newPlants.forEach((plant, index) => {
      const result = NewPlant.safeParse(plant);
      if (!result.success) {
        throw new TypeError(
          `Seed plant ${index} (id ${String(plant?.id)}) is refused by the contract: ${validationMessage('plant', result.error)}`,
        );
      }
      store(toStoredPlant(result.data));
    });
  };

  /** Records a delivery of the event to every enabled endpoint subscribed to its type, as the service's outbox does. */
  const announce = (type: WebhookEventType, plant: StoredPlant) => {
    for (const endpoint of endpoints.values()) {
      if (!endpoint.enabled || !endpoint.eventTypes.includes(type)) continue;
      deliverySeq += 1;
      deliveries.unshift({
        id: `msg_${instance}_${deliverySeq}`,
        endpointId: endpoint.id,
        type,
        url: endpoint.url,
        plant: toPlantWithId(plant),
        status: 'pending',
        attempts: 0,
        createdAt: now(),
      });
    }
  };

  /** The endpoint when `principal` may manage it; another principal's answers 404 as an unknown id does. */
  const endpointOf = (id: string, principal: FakePrincipal): StoredEndpoint => {
    const endpoint = endpoints.get(id);
    if (endpoint === undefined || !(principal.admin || endpoint.owner === principal.key))
      throw new Refusal(404, `No webhook endpoint has id ${JSON.stringify(id.slice(0, 100))}.`);
    return endpoint;
  };
  const enabledEndpointOf = (id: string, principal: FakePrincipal): StoredEndpoint => {
    const endpoint = endpointOf(id, principal);
    if (!endpoint.enabled) {
      throw new Refusal(409, `The webhook endpoint ${id} is disabled; enable it (PATCH with enabled: true) first.`);
    }
    return endpoint;
  };
  const checkedUrl = (text: string): string => {
    const checked = checkWebhookUrl(text, allowPrivateWebhooks);
    if ('refusal' in checked) throw new Refusal(400, `Invalid request body: ${checked.refusal}`);
    return checked.url;
  };
  const refuseTakenUrl = (url: string, owner: string, except?: string) => {
    for (const endpoint of endpoints.values()) {
      if (endpoint.url === url && endpoint.owner === owner && endpoint.id !== except) {
        throw new Refusal(
          409,
          `The url is already registered by webhook endpoint ${endpoint.id}; change or delete that one.`,
        );
      }
    }
  };

  const plantNotFound = (id: bigint) => new Refusal(404, `No plant has id ${id}.`);

  /** The secrets that sign the endpoint's deliveries now: those rotated out during their grace too. */
  const signingSecrets = (endpoint: StoredEndpoint): string[] => [
    endpoint.secret,
    ...endpoint.previous.filter(({ until }) => until > now()).map(({ secret }) => secret),
  ];

  /** Takes one test of a principal's window for a URL; answers the seconds to wait when it is full (0 when taken). */
  const takeTest = (key: string): number => {
    const at = now().getTime();
    const window = testWindows.get(key);
    if (window === undefined || window.startedAt <= at - 60_000) {
      testWindows.set(key, { startedAt: at, tests: 1 });
      return 0;
    }
    if (window.tests >= WEBHOOK_TESTS_PER_MINUTE)
      return Math.max(1, Math.ceil((window.startedAt + 60_000 - at) / 1000));
    window.tests += 1;
    return 0;
  };

  /**
   * One handler per contract route, answering as the service's routers do; each answer is typed by
   * the contract's responses for its route, so the fake cannot answer what the contract does not list.
   */
  const handlers: { [Name in RouteName]: (call: Call) => Promise<RouteAnswer<Name>> } = {
    createPlant: async ({ body }) => {
      const newPlant = parsed(contract.createPlant.body, body, 'request body');
      const plant = toStoredPlant(newPlant);
      const known = plants.get(plant.id);
      if (known === undefined) {
        store(plant);
        announce('newPlant', plant);
      } else if (!samePlant(known, plant)) {
        return errorAnswer(409, `A plant with id ${plant.id} already exists with different data.`);
      }
      return { status: 200, body: withoutId(plant) };
    },
    listPlants: async ({ query }) => {
      const { limit = LIST_LIMIT_DEFAULT, after, tag } = parsed(contract.listPlants.query, query, 'query parameters');
      const pageRequest = { limit, ...(after !== undefined && { after }), ...(tag !== undefined && { tag }) };
      const { items, nextAfter } = pageOf(sortedPlants(), pageRequest);
      const headers: Record<string, string> =
        nextAfter === undefined ? {} : { link: nextPageLink(pageRequest, nextAfter) };
      return { status: 200, headers, body: items };
    },
    getPlant: async ({ params }) => {
      const { id } = parsed(contract.getPlant.pathParams, params, 'path parameters');
      const plant = plants.get(id);
      if (plant === undefined) throw plantNotFound(id);
      return { status: 200, body: plant };
    },
    deletePlant: async ({ params }) => {
      const { id } = parsed(contract.deletePlant.pathParams, params, 'path parameters');
      const plant = plants.get(id);
      if (plant === undefined) throw plantNotFound(id);
      plants.delete(id);
      sorted = undefined;
      announce('plantDeleted', plant);
      return { status: 204, body: undefined };
    },
    createWebhook: async ({ body, principal }) => {
      const endpointBody = parsed(contract.createWebhook.body, body, 'request body');
      const url = checkedUrl(endpointBody.url);
      refuseTakenUrl(url, principal.key);
      const owned = [...endpoints.values()].filter((endpoint) => endpoint.owner === principal.key).length;
      if (owned >= WEBHOOK_ENDPOINTS_MAX) {
        const message = `At most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints may be registered by one principal; delete one first.`;
        return errorAnswer(409, message);
      }
      if (endpoints.size >= webhookEndpointsMax) {
        const message = `The service holds its most webhook endpoints of all principals (${webhookEndpointsMax}); ask its operator.`;
        return errorAnswer(409, message);
      }
      const endpoint: StoredEndpoint = {
        id: `ep_${hex(16)}`,
        url,
        ...(endpointBody.description !== undefined && { description: endpointBody.description }),
        eventTypes: endpointBody.eventTypes ?? [...WEBHOOK_EVENT_TYPES_DEFAULT],
        payloadFormat: endpointBody.payloadFormat ?? 'plain',
        ...(endpointBody.rateLimit !== undefined && { rateLimit: endpointBody.rateLimit }),
        enabled: true,
        createdAt: now(),
        owner: principal.key,
        secret: newSecret(),
        previous: [],
      };
      endpoints.set(endpoint.id, endpoint);
      const created: CreatedWebhookEndpoint = { ...shown(endpoint, principal), secret: endpoint.secret };
      return { status: 201, body: created };
    },
    listWebhooks: async ({ principal }) => ({
      status: 200,
      body: [...endpoints.values()]
        .filter((endpoint) => principal.admin || endpoint.owner === principal.key)
        .map((endpoint) => shown(endpoint, principal)),
    }),
    getWebhook: async ({ params, principal }) => {
      const { id } = parsed(contract.getWebhook.pathParams, params, 'path parameters');
      return { status: 200, body: shown(endpointOf(id, principal), principal) };
    },
    updateWebhook: async ({ params, body, principal }) => {
      const { id } = parsed(contract.updateWebhook.pathParams, params, 'path parameters');
      const changes = parsed(contract.updateWebhook.body, body, 'request body');
      const endpoint = endpointOf(id, principal);
      const url = changes.url === undefined ? undefined : checkedUrl(changes.url);
      if (url !== undefined) {
        refuseTakenUrl(url, endpoint.owner, id);
        endpoint.url = url;
      }
      if (changes.description === null) delete endpoint.description;
      else if (changes.description !== undefined) endpoint.description = changes.description;
      if (changes.eventTypes !== undefined) endpoint.eventTypes = changes.eventTypes;
      if (changes.payloadFormat !== undefined) endpoint.payloadFormat = changes.payloadFormat;
      if (changes.rateLimit === null) delete endpoint.rateLimit;
      else if (changes.rateLimit !== undefined) endpoint.rateLimit = changes.rateLimit;
      if (changes.enabled === false && endpoint.enabled) {
        endpoint.enabled = false;
        endpoint.disabledReason = DISABLED_BY_REQUEST;
      } else if (changes.enabled === true) {
        endpoint.enabled = true;
        delete endpoint.disabledReason;
      }
      return { status: 200, body: shown(endpoint, principal) };
    },
    rotateWebhookSecret: async ({ params, principal }) => {
      const { id } = parsed(contract.rotateWebhookSecret.pathParams, params, 'path parameters');
      const endpoint = endpointOf(id, principal);
      const at = now();
      endpoint.previous = [
        { secret: endpoint.secret, until: new Date(at.getTime() + rotationGraceMs) },
        ...endpoint.previous.filter(({ until }) => until > at),
      ].slice(0, WEBHOOK_PREVIOUS_SECRETS_MAX);
      endpoint.secret = newSecret();
      return { status: 200, body: { secret: endpoint.secret } };
    },
    recoverWebhook: async ({ params, body, principal }) => {
      const { id } = parsed(contract.recoverWebhook.pathParams, params, 'path parameters');
      const { since } = parsed(contract.recoverWebhook.body, body, 'request body');
      enabledEndpointOf(id, principal);
      const from = new Date(since);
      const failed = deliveries
        .filter((delivery) => delivery.endpointId === id && delivery.status === 'failed' && delivery.createdAt >= from)
        .reverse()
        .slice(0, WEBHOOK_RECOVER_MAX);
      for (const delivery of failed) requeue(delivery);
      return { status: 202, body: { requeued: failed.length } };
    },
    retryWebhookDelivery: async ({ params, principal }) => {
      const { id, deliveryId } = parsed(contract.retryWebhookDelivery.pathParams, params, 'path parameters');
      enabledEndpointOf(id, principal);
      const delivery = deliveries.find((candidate) => candidate.endpointId === id && candidate.id === deliveryId);
      if (delivery === undefined) {
        throw new Refusal(404, `The webhook endpoint ${id} has no delivery with id ${JSON.stringify(deliveryId)}.`);
      }
      requeue(delivery);
      return { status: 202, body: undefined };
    },
    testWebhook: async ({ params, body, principal }) => {
      const { id } = parsed(contract.testWebhook.pathParams, params, 'path parameters');
      const request = parsed(contract.testWebhook.body, body, 'request body');
      const endpoint = endpointOf(id, principal);
      const wait = takeTest(`${principal.key}\0${endpoint.url}`);
      if (wait > 0) return errorAnswer(429, webhookTestsLimited(id, wait), { 'retry-after': String(wait) });
      const eventType = request?.eventType ?? endpoint.eventTypes[0] ?? WEBHOOK_EVENT_TYPES[0];
      const webhookId = `${WEBHOOK_TEST_ID_PREFIX}${hex(16)}`;
      const at = now();
      const text = webhookTestJson(eventType, endpoint.payloadFormat, at);
      const signed = await signedHeaders(signingSecrets(endpoint), webhookId, Math.floor(at.getTime() / 1000), text);
      const started = performance.now();
      const answer = await sendTestDelivery({
        url: endpoint.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signed, [WEBHOOK_EVENT_TYPE_HEADER]: eventType },
        body: text,
      });
      const { delivered, status, error } = webhookTestOutcome(answer);
      return {
        status: 200,
        body: {
          webhookId,
          eventType,
          delivered,
          ...(status !== undefined && { status }),
          durationMs: Math.round(performance.now() - started),
          ...(error !== undefined && { error }),
        },
      };
    },
    deleteWebhook: async ({ params, principal }) => {
      const { id } = parsed(contract.deleteWebhook.pathParams, params, 'path parameters');
      endpoints.delete(endpointOf(id, principal).id);
      deliveries = deliveries.filter((delivery) => delivery.endpointId !== id);
      return { status: 204, body: undefined };
    },
    listWebhookDeliveries: async ({ params, query, principal }) => {
      const { id } = parsed(contract.listWebhookDeliveries.pathParams, params, 'path parameters');
      const { limit = DELIVERIES_LIMIT_DEFAULT, before } = parsed(
        contract.listWebhookDeliveries.query,
        query,
        'query parameters',
      );
      endpointOf(id, principal);
      // Newest first, as the service pages them: after the delivery `before` names, by its sequence.
      const beforeSeq = before === undefined ? undefined : BigInt(before.slice(before.lastIndexOf('_') + 1));
      const own = deliveries.filter(
        (delivery) =>
          delivery.endpointId === id &&
          (beforeSeq === undefined || BigInt(delivery.id.slice(delivery.id.lastIndexOf('_') + 1)) < beforeSeq),
      );
      const page = own.slice(0, limit);
      const last = page.at(-1);
      const headers: Record<string, string> =
        own.length > limit && last !== undefined
          ? { link: `<?${new URLSearchParams({ limit: String(limit), before: last.id })}>; rel="next"` }
          : {};
      return { status: 200, headers, body: page.map(toDelivery) };
    },
  };

  /** The answer to one request, or the fault that replaces it. */
  const answer = async (request: Request, pathname: string): Promise<Answer | PlantStoreFault> => {
    const match = matchRoute(request.method, pathname);
    if (match.kind === 'not-found') return errorAnswer(404, 'No operation exists at this path.');
    if (match.kind === 'other-method') {
      const allow = { allow: match.allow };
      if (request.method === 'OPTIONS') return { status: 204, headers: allow };
      return errorAnswer(405, `${request.method} is not allowed here; allowed: ${match.allow}.`, allow);
    }
    const fault = faults.take(match.name);
    const faulty = fault && faultAnswer(fault);
    if (faulty) return faulty;
    if (fault?.type === 'connection-error') return fault;
    if (fault?.type === 'delay') await wait(fault.ms, request.signal);
    const { search } = new URL(request.url);
    const query = parseQuery(search);
    const principal = authorize(tokens, request.headers, query, contract[match.name].metadata.scope as Scope);
    const body = takesJson(match.name) ? await readJsonBody(request, bodyLimit, bodyIsOptional(match.name)) : undefined;
    const run = (): Promise<Answer> => handlers[match.name]({ params: match.params, query, body, principal });
    const answered = takesIdempotencyKey(match.name)
      ? await keyed(match.name, request, { principal: principal.key, url: `${pathname}${search}`, body }, run)
      : await run();
    return fault?.type === 'lost-answer' ? fault : answered;
  };

  /**
   * Runs a route that takes an Idempotency-Key as the service does (its http/idempotency-key.ts):
   * the first answer to a principal's key is kept and replayed, with Idempotent-Replayed: true, to
   * the same request; the same key with another route or body answers 422, and one that comes while
   * the first still runs 409. Only final answers are kept: not a 5xx, a 429 or a 408, of which a
   * route here answers only the test limit's 429 (a fault's answer comes before the key is read).
   */
  const keyed = async (
    name: RouteName,
    request: Request,
    { principal, url, body }: { principal: string; url: string; body: unknown },
    run: () => Promise<Answer>,
  ): Promise<Answer> => {
    const header = request.headers.get('idempotency-key');
    const schema = headersOf(name);
    if (schema !== undefined) parsed(schema, { 'idempotency-key': header ?? undefined }, 'headers');
    if (header === null) return run();
    const key = `${principal}\0${header}`;
    const claim = idempotencyKeys.claim(key, `${request.method}\0${url}\0${stringifyExactJson(body ?? null)}`);
    if (claim.outcome === 'running') {
      const message = 'A request with this Idempotency-Key is still running; retry it in a moment.';
      return errorAnswer(409, message, { 'retry-after': '1' });
    }
    if (claim.outcome === 'mismatch') {
      const message =
        'The Idempotency-Key was sent before with another request (route or body); send a new key with a new request.';
      return errorAnswer(422, message);
    }
    if (claim.outcome === 'done') return { ...claim.answer, headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } };
    let answer: Answer;
    try {
      answer = await run();
    } catch (error) {
      if (!(error instanceof Refusal)) {
        idempotencyKeys.release(key);
        throw error;
      }
      answer = errorAnswer(error.status, error.message, error.headers);
    }
    if (answer.status === 429) idempotencyKeys.release(key);
    else idempotencyKeys.finish(key, { status: answer.status, body: answer.body });
    return answer;
  };

  const handle = async (request: Request, { basePath = '' }: { basePath?: string } = {}): Promise<Response> => {
    if (request.signal.aborted) throw request.signal.reason;
    const incoming = request.headers.get('x-request-id');
    const requestId = incoming !== null && sameRequestId.test(incoming) ? incoming : crypto.randomUUID();
    const { pathname } = new URL(request.url);
    const path = basePath !== '' && pathname.startsWith(basePath) ? pathname.slice(basePath.length) : pathname;
    let answered: Answer | PlantStoreFault;
    try {
      answered = await answer(request, path);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      answered = errorAnswer(error.status, error.message, error.headers);
    }
    if ('type' in answered) throw connectionError();
    return toResponse(answered, requestId, request.method);
  };

  const reset = () => {
    plants.clear();
    sorted = undefined;
    endpoints.clear();
    deliveries = [];
    testWindows.clear();
    idempotencyKeys.clear();
    faults.clear();
    seed(options.plants ?? []);
  };
  reset();

  return {
    fetch: (input, init) => handle(new Request(input, init)),
    handle,
    get plants() {
      return sortedPlants().map(toPlantWithId);
    },
    seed,
    get webhooks() {
      return [...endpoints.values()].map((endpoint) => toWebhookEndpoint(endpoint));
    },
    deliveries: (endpointId) =>
      deliveries
        .filter((delivery) => endpointId === undefined || delivery.endpointId === endpointId)
        .map(({ deliveredAt: _deliveredAt, ...delivery }) => delivery),
    signDelivery: async (delivery, { timestampSeconds = Math.floor(now().getTime() / 1000) } = {}) => {
      const endpoint = endpoints.get(delivery.endpointId);
      if (endpoint === undefined)
        throw new RangeError(`No webhook endpoint has id ${JSON.stringify(delivery.endpointId)}.`);
      // As the service makes it when it claims the delivery: in the endpoint's format then,
      // timestamped when the event was announced.
      const { type, createdAt } = delivery;
      const plant = toStoredPlant(delivery.plant);
      const data = WEBHOOK_EVENT_DATA_JSON[type](plantJson(plant), plant.id);
      const body = webhookEventJson(type, endpoint.payloadFormat, data, createdAt);
      const signed = await signedHeaders(signingSecrets(endpoint), delivery.id, timestampSeconds, body);
      const headers = { 'content-type': 'application/json', ...signed, [WEBHOOK_EVENT_TYPE_HEADER]: type };
      return { url: endpoint.url, method: 'POST', headers, body };
    },
    settleDelivery: (deliveryId, outcome) => {
      const delivery = deliveries.find((candidate) => candidate.id === deliveryId);
      if (delivery === undefined) throw new RangeError(`No delivery has id ${JSON.stringify(deliveryId)}.`);
      delivery.attempts += 1;
      delivery.status = outcome;
      if (outcome === 'delivered') delivery.deliveredAt = now();
    },
    fail: (fault, faultOptions) => faults.add(fault, faultOptions),
    clearFaults: () => faults.clear(),
    reset,
  };
};
