import { createHash, randomBytes } from 'node:crypto';
import {
  contract,
  DELIVERIES_LIMIT_DEFAULT,
  toWebhookEndpoint,
  WEBHOOK_ENDPOINTS_MAX,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_RECOVER_MAX,
  WEBHOOK_ROTATION_GRACE_DEFAULT_MS,
  WEBHOOK_TESTS_PER_MINUTE,
  webhookTestsLimited,
} from '@org/plant-contract';
import { initServer } from '@ts-rest/express';
import type { Principal } from '../../auth/authenticator.ts';
import { clientKey, principalOf } from '../../auth/bearer-auth.ts';
import { CONFIG_DEFAULTS } from '../../config-defaults.ts';
import { type AnswerBudget, answerBudget } from '../../http/answer-budget.ts';
import { HttpError } from '../../http/http-error.ts';
import { idempotencyKey } from '../../http/idempotency-key.ts';
import { jsonBody, optionalJsonBody } from '../../http/json-body.ts';
import type { RequestStore } from '../../store/request-store.ts';
import { DELIVERY_ROW_BYTES, endpointBytes } from '../../store/row-bytes.ts';
import {
  parseDeliveryId,
  type StoredDelivery,
  type StoredEndpoint,
  type WebhookStore,
} from '../../store/webhook-store.ts';
import { plainSecrets, type SecretBox } from '../secrets/secret-box.ts';
import { newSecret } from '../secrets/signature.ts';
import {
  LookupUnavailableError,
  normalizeWebhookUrl,
  refuseTarget,
  type TargetPolicy,
} from '../targets/target-address.ts';
import type { WebhookTester } from './webhook-tester.ts';

export type WebhooksRouterOptions = TargetPolicy & {
  bodyLimit?: number | undefined;
  /** Seals new secrets for storage; by default they are stored in plain text. */
  secrets?: SecretBox | undefined;
  /** How long a rotated-out secret still signs deliveries. */
  rotationGraceMs?: number | undefined;
  /** Shared with the other lists; by default one of this router's own. */
  answers?: AnswerBudget | undefined;
  /** Sends the test deliveries of POST /webhooks/{id}/test. */
  tester: WebhookTester;
  /** Most endpoints of all principals together (PLANT_WEBHOOK_ENDPOINTS_MAX); each principal has WEBHOOK_ENDPOINTS_MAX. */
  endpointsMax?: number | undefined;
  /** Keeps the Idempotency-Keys' answers and the test deliveries' windows. */
  requests: RequestStore;
  /** See `idempotencyKey`. */
  idempotencyKeysPerPrincipal?: number | undefined;
};

/**
 * Rows one store call changes at most: re-enabling, disabling and recovering work in batches of
 * this size, so that none holds the database (the SQLite thread, a PostgreSQL statement) for long.
 */
const BATCH_SIZE = 500;

/** Runs `batch` until it changes fewer rows than a batch (or `most` are reached); resolves how many it changed. */
const inBatches = async (batch: (limit: number) => Promise<number>, most = Number.POSITIVE_INFINITY) => {
  let total = 0;
  for (;;) {
    const limit = Math.min(BATCH_SIZE, most - total);
    if (limit <= 0) return total;
    const changed = await batch(limit);
    total += changed;
    if (changed < limit) return total;
  }
};

const s = initServer();

const toDelivery = (delivery: StoredDelivery) => ({
  id: delivery.id,
  plantId: delivery.plantId,
  type: delivery.type,
  status: delivery.status,
  attempts: delivery.attempts,
  ...(delivery.lastStatus !== undefined && { lastStatus: delivery.lastStatus }),
  ...(delivery.lastError !== undefined && { lastError: delivery.lastError }),
  ...(delivery.nextAttemptAt !== undefined && { nextAttemptAt: delivery.nextAttemptAt.toISOString() }),
  ...(delivery.deliveredAt !== undefined && { deliveredAt: delivery.deliveredAt.toISOString() }),
});

const notFound = (id: string) => ({
  status: 404 as const,
  body: { error: 404, message: `No webhook endpoint has id ${JSON.stringify(id.slice(0, 100))}.` },
});

const urlTaken = (holder: string) => ({
  status: 409 as const,
  body: {
    error: 409,
    message: `The url is already registered by webhook endpoint ${holder}; change or delete that one.`,
  },
});

const disabled = (id: string) => ({
  status: 409 as const,
  body: {
    error: 409,
    message: `The webhook endpoint ${id} is disabled; enable it (PATCH with enabled: true) first.`,
  },
});

const badBody = (reason: string) => ({
  status: 400 as const,
  body: { error: 400, message: `Invalid request body: ${reason}` },
});

/** Whether `principal` may see and manage `endpoint`: its owner's, or an administrator's. */
const mayManage = (endpoint: StoredEndpoint, principal: Principal): boolean =>
  principal.admin || endpoint.owner === principal.key;

/** The endpoint as answered to `principal`: its owner shown to administrators only. */
const answered = (endpoint: StoredEndpoint, principal: Principal) =>
  toWebhookEndpoint(endpoint, { showOwner: principal.admin });

/**
 * The next page of deliveries as a relative reference (`?limit=…&before=…`), which resolves against
 * the request's own URL, as the plants' does.
 */
const nextDeliveriesLink = (limit: number, before: string): string =>
  `<?${new URLSearchParams({ limit: String(limit), before })}>; rel="next"`;

/** The key of the test deliveries' window of a principal and a URL, digested. */
const testWindowKey = (principal: string, url: string): string =>
  createHash('sha256').update(`${principal}\0${url}`).digest('hex');

/** `ep_` and 32 hex digits. */
const newEndpointId = (): string => `ep_${randomBytes(16).toString('hex')}`;

/**
 * The URL as stored, or why it may not be a webhook URL; a host that cannot be looked up now is
 * 503 with Retry-After, a passing failure that an Idempotency-Key does not keep.
 */
const checkedUrl = async (text: string, policy: TargetPolicy): Promise<{ url: string } | { refusal: string }> => {
  const normalized = normalizeWebhookUrl(text);
  if ('refusal' in normalized) return normalized;
  let refusal: string | undefined;
  try {
    refusal = await refuseTarget(normalized.url, policy);
  } catch (error) {
    if (error instanceof LookupUnavailableError) throw new HttpError(503, error.message, { 'Retry-After': '1' });
    throw error;
  }
  return refusal === undefined ? normalized : { refusal };
};

/** The contract's webhook management routes, which this router implements. */
const webhookRoutes = {
  createWebhook: contract.createWebhook,
  listWebhooks: contract.listWebhooks,
  getWebhook: contract.getWebhook,
  deleteWebhook: contract.deleteWebhook,
  listWebhookDeliveries: contract.listWebhookDeliveries,
  updateWebhook: contract.updateWebhook,
  rotateWebhookSecret: contract.rotateWebhookSecret,
  recoverWebhook: contract.recoverWebhook,
  retryWebhookDelivery: contract.retryWebhookDelivery,
  testWebhook: contract.testWebhook,
};

/** The handlers of the webhook management routes, one per route of the contract. */
export const createWebhooksRouter = (
  store: WebhookStore,
  {
    bodyLimit,
    secrets = plainSecrets,
    rotationGraceMs = WEBHOOK_ROTATION_GRACE_DEFAULT_MS,
    answers = answerBudget(),
    tester,
    endpointsMax = CONFIG_DEFAULTS.webhooks.endpointsMax,
    requests,
    idempotencyKeysPerPrincipal,
    ...policy
  }: WebhooksRouterOptions,
) => {
  const keyed = idempotencyKey({
    store: requests,
    secrets,
    ...(idempotencyKeysPerPrincipal !== undefined && { maxPerPrincipal: idempotencyKeysPerPrincipal }),
  });
  /**
   * The endpoint `id` when the caller may manage it, else undefined: another principal's endpoint
   * is answered exactly as one that does not exist, after the same one read.
   */
  const managed = async (id: string, principal: Principal): Promise<StoredEndpoint | undefined> => {
    const endpoint = await store.getEndpoint(id);
    return endpoint !== undefined && mayManage(endpoint, principal) ? endpoint : undefined;
  };
  // After the body is read: the key is kept with the request it came with, route and body.
  const idempotent = [...jsonBody(bodyLimit), keyed];
  return s.router(webhookRoutes, {
    createWebhook: {
      middleware: idempotent,
      handler: async ({ body, res }) => {
        const principal = principalOf(res);
        const checked = await checkedUrl(body.url, policy);
        if ('refusal' in checked) return badBody(checked.refusal);
        const secret = newSecret();
        const id = newEndpointId();
        const endpoint = await store.createEndpoint(
          {
            id,
            url: checked.url,
            ...(body.description !== undefined && { description: body.description }),
            ...(body.eventTypes !== undefined && { eventTypes: body.eventTypes }),
            ...(body.payloadFormat !== undefined && { payloadFormat: body.payloadFormat }),
            ...(body.rateLimit !== undefined && { rateLimit: body.rateLimit }),
            secret: secrets.seal(id, secret),
            owner: principal.key,
          },
          { perOwner: WEBHOOK_ENDPOINTS_MAX, total: endpointsMax },
        );
        if (endpoint.outcome === 'too-many') {
          const message = `At most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints may be registered by one principal; delete one first.`;
          return { status: 409, body: { error: 409, message } };
        }
        if (endpoint.outcome === 'too-many-in-all') {
          const message = `The service holds its most webhook endpoints of all principals (${endpointsMax}); ask its operator.`;
          return { status: 409, body: { error: 409, message } };
        }
        if (endpoint.outcome === 'url-taken') return urlTaken(endpoint.holder);
        return { status: 201, body: { ...answered(endpoint.endpoint, principal), secret } };
      },
    },

    listWebhooks: async ({ req, res }) => {
      const principal = principalOf(res);
      // Reserved for what the store holds, not for the most it could: the read itself is bounded by
      // the store (the SQLite thread's large batches, the PostgreSQL pool); what the budget bounds is
      // what answers hold while slow readers take them.
      const endpoints = await store.listEndpoints(principal.admin ? undefined : principal.key);
      answers.reserve(
        res,
        endpoints.reduce((bytes, endpoint) => bytes + endpointBytes(endpoint), 0),
        clientKey(req, res),
      );
      return { status: 200, body: endpoints.map((endpoint) => answered(endpoint, principal)) };
    },

    getWebhook: async ({ params, res }) => {
      const principal = principalOf(res);
      const endpoint = await managed(params.id, principal);
      return endpoint ? { status: 200, body: answered(endpoint, principal) } : notFound(params.id);
    },

    deleteWebhook: async ({ params, res }) =>
      (await managed(params.id, principalOf(res))) && (await store.deleteEndpoint(params.id))
        ? { status: 204, body: undefined }
        : notFound(params.id),

    listWebhookDeliveries: async ({ params, query, req, res }) => {
      if (!(await managed(params.id, principalOf(res)))) return notFound(params.id);
      const limit = query.limit ?? DELIVERIES_LIMIT_DEFAULT;
      const before = query.before === undefined ? undefined : parseDeliveryId(query.before)?.seq;
      if (query.before !== undefined && before === undefined) {
        return { status: 400, body: { error: 400, message: 'Invalid query parameters: before is beyond int64.' } };
      }
      // One extra row tells whether a next page exists, so no empty last page is announced.
      const deliveries = await store.listDeliveries(params.id, limit + 1, before);
      if (deliveries === undefined) return notFound(params.id);
      const page = deliveries.slice(0, limit);
      // As for endpoints: reserved for the deliveries read (a row's size is the service's).
      answers.reserve(res, page.length * DELIVERY_ROW_BYTES, clientKey(req, res));
      const last = page.at(-1);
      if (deliveries.length > limit && last) res.setHeader('Link', nextDeliveriesLink(limit, last.id));
      return { status: 200, body: page.map(toDelivery) };
    },
    updateWebhook: {
      middleware: jsonBody(bodyLimit),
      handler: async ({ params, body, res }) => {
        const principal = principalOf(res);
        if (!(await managed(params.id, principal))) return notFound(params.id);
        let url: string | undefined;
        if (body.url !== undefined) {
          const checked = await checkedUrl(body.url, policy);
          if ('refusal' in checked) return badBody(checked.refusal);
          url = checked.url;
        }
        const updated = await store.updateEndpoint(params.id, {
          ...(url !== undefined && { url }),
          ...(body.description !== undefined && { description: body.description }),
          ...(body.enabled !== undefined && { enabled: body.enabled }),
          ...(body.eventTypes !== undefined && { eventTypes: body.eventTypes }),
          ...(body.payloadFormat !== undefined && { payloadFormat: body.payloadFormat }),
          ...(body.rateLimit !== undefined && { rateLimit: body.rateLimit }),
        });
        if (updated.outcome === 'not-found') return notFound(params.id);
        if (updated.outcome === 'url-taken') return urlTaken(updated.holder);
        return { status: 200, body: answered(updated.endpoint, principal) };
      },
    },
    rotateWebhookSecret: {
      middleware: [keyed],
      handler: async ({ params, res }) => {
        if (!(await managed(params.id, principalOf(res)))) return notFound(params.id);
        const secret = newSecret();
        const rotated = await store.rotateSecret(params.id, secrets.seal(params.id, secret), rotationGraceMs);
        return rotated ? { status: 200, body: { secret } } : notFound(params.id);
      },
    },
    recoverWebhook: {
      middleware: idempotent,
      handler: async ({ params, body, res }) => {
        const endpoint = await managed(params.id, principalOf(res));
        if (endpoint === undefined) return notFound(params.id);
        if (!endpoint.enabled) return disabled(params.id);
        const since = new Date(body.since);
        const requeued = await inBatches((limit) => store.requeueFailed(params.id, since, limit), WEBHOOK_RECOVER_MAX);
        return { status: 202, body: { requeued } };
      },
    },
    testWebhook: {
      middleware: [...optionalJsonBody(bodyLimit), keyed],
      handler: async ({ params, body, res }) => {
        const principal = principalOf(res);
        const endpoint = await managed(params.id, principal);
        if (endpoint === undefined) return notFound(params.id);
        const admission = tester.admit(principal.key);
        if (admission.outcome !== 'admitted') {
          const wait = admission.retryAfterSeconds;
          res.setHeader('Retry-After', String(wait));
          if (admission.outcome === 'principal-busy') {
            const message = `This client has ${admission.most} test deliveries in flight, its most; retry after ${wait} s.`;
            return { status: 429, body: { error: 429, message } };
          }
          const message = `Too many test deliveries are in flight; retry after ${wait} s.`;
          return { status: 503, body: { error: 503, message } };
        }
        try {
          // Per principal and URL, in the store: it holds across replicas, and across deleting the
          // endpoint and registering the URL again.
          const window = await requests.takeWebhookTest(
            testWindowKey(principal.key, endpoint.url),
            new Date(),
            WEBHOOK_TESTS_PER_MINUTE,
            60_000,
          );
          if (window.outcome === 'limited') {
            const seconds = Math.max(1, Math.ceil(window.retryInMs / 1000));
            res.setHeader('Retry-After', String(seconds));
            return { status: 429, body: { error: 429, message: webhookTestsLimited(endpoint.id, seconds) } };
          }
          const secrets = await store.signingSecrets(endpoint.id);
          // Deleted meanwhile.
          if (secrets === undefined) return notFound(params.id);
          const type = body?.eventType ?? endpoint.eventTypes[0] ?? WEBHOOK_EVENT_TYPES[0];
          return { status: 200, body: await tester.send(endpoint, secrets, type) };
        } finally {
          admission.release();
        }
      },
    },
    retryWebhookDelivery: async ({ params, res }) => {
      const endpoint = await managed(params.id, principalOf(res));
      if (endpoint === undefined) return notFound(params.id);
      if (!endpoint.enabled) return disabled(params.id);
      if (await store.retryDelivery(params.id, params.deliveryId)) return { status: 202, body: undefined };
      const message = `The webhook endpoint ${params.id} has no delivery with id ${JSON.stringify(params.deliveryId)}.`;
      return { status: 404, body: { error: 404, message } };
    },
  });
};
