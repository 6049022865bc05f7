import type { KeyObject } from 'node:crypto';
import { WEBHOOK_EVENT_TYPE_HEADER, webhookEventJson } from '@org/plant-contract';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../../clock.ts';
import type { WebhookConfig } from '../../config.ts';
import type { Metrics } from '../../ops/metrics.ts';
import type { Tracing } from '../../ops/tracing-hooks.ts';
import type { PlantStore } from '../../store/plant-store.ts';
import type { AttemptResult, ClaimedDelivery, RecordedAttempt } from '../../store/webhook-store.ts';
import { plainSecrets, type SecretBox } from '../secrets/secret-box.ts';
import { secretKey, signedHeaders } from '../secrets/signature.ts';
import { createHostResolver, type HostResolver } from '../targets/host-resolver.ts';
import { BoundedMap } from './bounded-map.ts';
import { type Attempt, createEndpointWindows, MAX_WINDOW, signalOf } from './endpoint-windows.ts';
import { createAgents, type PostOutcome, postWebhook } from './post-webhook.ts';
import { createWebhookMetrics, type DeliveryOutcome } from './webhook-metrics.ts';
import { startWebhookRetention } from './webhook-retention.ts';

export type WebhookDeliveryOptions = {
  store: PlantStore;
  config: Pick<
    WebhookConfig,
    'timeoutMs' | 'retryDelaysMs' | 'allowPrivate' | 'retentionMs' | 'disableAfterMs' | 'dnsTimeoutMs'
  >;
  /** Looks receivers' hosts up; by default a host resolver with `config.dnsTimeoutMs`. */
  resolver?: HostResolver;
  /** Opens the stored signing secrets; by default they are stored in plain text. */
  secrets?: SecretBox;
  logger: Logger;
  /** The service's metrics; the delivery metrics join its registry. */
  metrics?: Pick<Metrics, 'registry'>;
  /**
   * Subscribes to announcements of plants created in this process, so that the loop starts at
   * once instead of at its next poll. Default: the store's own (`WebhookStore.onAnnounce`); a
   * delivery thread hears them from the HTTP thread instead.
   */
  onAnnounce?: (listener: () => void) => () => void;
  /** How long an idle loop waits before looking for due deliveries again. Default 1000. */
  pollIntervalMs?: number;
  /**
   * Prompt slots: attempts in flight at most to endpoints that answer within SLOW_ATTEMPT_MS (see
   * endpoint-windows.ts). Default 64.
   */
  concurrency?: number;
  /**
   * Lingering slots: attempts in flight at most to slow endpoints (that hang, answer slowly or
   * fail), between them. With `concurrency`, the most deliveries this process holds. Default 64.
   */
  lingering?: number;
  /** How long stop() lets attempts in flight finish before cutting them off (they are retried later). Default 5000. */
  stopGraceMs?: number;
  /** Jitter source, for tests. */
  random?: () => number;
  /** Set when tracing is on: each attempt is a span in its create's trace. */
  tracing?: Pick<Tracing, 'deliveryAttempt'>;
  /**
   * The time of signatures and of the disable rule, and the timer of every wait: polls, pauses,
   * attempt timeouts, the stop grace and the retention's checks. Default: the system's.
   */
  clock?: Clock;
};

export type WebhookDelivery = { stop(): Promise<void> };

/** Longest wait a Retry-After may impose beyond the schedule: a receiver cannot park a delivery for ever. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;
/** How far the lease outlasts the attempt's timeout: time to record the outcome. */
const LEASE_MARGIN_MS = 30_000;
/** Signing keys kept opened: two per endpoint (one rotating) at the most endpoints, with room to spare. */
const MAX_CACHED_SIGNING_KEYS = 1_000;
/** Why an endpoint that answered 410 Gone is disabled. */
export const GONE_REASON = 'The receiver answered 410 Gone.';

/** "5 days", "36 hours", "90 minutes", "1500 ms": the largest whole unit. */
const describeDuration = (ms: number): string => {
  for (const [unit, size] of [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size} ${unit}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
};

/** Why an endpoint whose every attempt failed for `disableAfterMs` is disabled. */
export const failingReason = (disableAfterMs: number): string =>
  `Every delivery failed for ${describeDuration(disableAfterMs)}.`;

/** How often, at most, the loop asks whether a failing endpoint has failed long enough to disable. */
const DISABLE_CHECK_INTERVAL_MS = 60_000;

/** Retries made due in one store operation when an endpoint answers again after an outage. */
const EXPEDITE_BATCH = 500;

/** The wait after the store failed to answer a claim. */
const STORE_FAILURE_BACKOFF_MS = 5_000;

/**
 * What an attempt comes to. 2xx: delivered. 410: the endpoint is gone. Refused by the address
 * guard: failed at once (the target is not allowed; retrying would not change that). Anything else (3xx, 4xx,
 * 5xx, timeout, connection failure): retried after the next delay of the schedule — spread by ±10 %
 * so that retries of one burst do not arrive together, and never before Retry-After — or failed
 * once the schedule is spent.
 */
export const attemptResult = (
  outcome: PostOutcome,
  attemptsBefore: number,
  retryDelaysMs: readonly number[],
  random: () => number = Math.random,
): AttemptResult => {
  const { status } = outcome;
  if (status !== undefined && status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status === 410) return { outcome: 'gone', status, error: 'The receiver answered 410 Gone.' };
  const error =
    status === undefined
      ? (outcome as { error: string }).error
      : status >= 300 && status < 400
        ? `The receiver answered ${status}; redirects are not followed.`
        : `The receiver answered ${status}.`;
  const delay = retryDelaysMs[attemptsBefore];
  const withStatus = status === undefined ? {} : { status };
  if (delay === undefined || ('refused' in outcome && outcome.refused))
    return { outcome: 'failed', ...withStatus, error };
  const jittered = Math.round(delay * (0.9 + 0.2 * random()));
  const retryAfterMs = 'retryAfterMs' in outcome ? outcome.retryAfterMs : undefined;
  const retryInMs = Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  return { outcome: 'retry', retryInMs, ...withStatus, error };
};

/**
 * Prompt delivery slots, by default: two endpoints at the largest window (MAX_WINDOW); each attempt
 * holds at most one store operation at a time.
 */
export const DELIVERY_CONCURRENCY = 2 * MAX_WINDOW;

/**
 * Drains the outbox off the request path: claims due deliveries (leased, so replicas share the
 * work and a crashed one's deliveries come back), each endpoint within a window of attempts in
 * flight that follows its receiver, taking turns across endpoints, signs and POSTs each, and
 * records the outcome. Receivers that hang, answer slowly or fail share the lingering slots, so
 * that those that answer keep the prompt ones (endpoint-windows.ts). Memory is bounded by
 * `concurrency + lingering`, and creates never wait for any of this. It also deletes the
 * deliveries finished longer ago than the retention (see webhook-retention.ts).
 */
export const startWebhookDelivery = ({
  store,
  config,
  logger,
  metrics,
  secrets = plainSecrets,
  pollIntervalMs = 1_000,
  concurrency = DELIVERY_CONCURRENCY,
  lingering = concurrency,
  stopGraceMs = 5_000,
  onAnnounce = (listener) => store.webhooks.onAnnounce(listener),
  random = Math.random,
  tracing,
  clock = systemClock,
  resolver = createHostResolver({ timeoutMs: config.dnsTimeoutMs }),
}: WebhookDeliveryOptions): WebhookDelivery => {
  const log = logger.child({ component: 'webhooks' });
  const counted = metrics ? createWebhookMetrics(metrics.registry, store.webhooks) : undefined;
  // Every attempt in flight has its socket: none waits in the agent's queue, its timeout running.
  const agents = createAgents({ allowPrivate: config.allowPrivate, maxSockets: concurrency + lingering, resolver });
  const leaseMs = config.timeoutMs + LEASE_MARGIN_MS;
  const { disableAfterMs } = config;
  /** When each failing endpoint was last checked for auto-disable: at most one check per interval. */
  const disableCheckedAt = new Map<string, number>();
  /** Endpoints whose retries are being made due (see expedite): one pass at a time each, awaited by stop(). */
  const expediting = new Map<string, Promise<void>>();
  /** Whether delivered attempts are logged: when not, nothing is spent describing them. */
  const debug = log.isLevelEnabled('debug');
  const inFlight = new Set<Promise<void>>();
  const windows = createEndpointWindows({ lingering, clock });
  let stopping = false;
  /** Ends the current pause early: on stop; and when an attempt frees its slot or this process announced plants. */
  let wake: (() => void) | undefined;
  let slotFreed: (() => void) | undefined;
  /**
   * Prompt attempts in flight right after the last claim. The next claim waits until half of them
   * have ended (or one in a lingering slot has, or the poll is due), so that each claim takes a
   * batch sized to what is in flight rather than one delivery per freed slot: a claim is a store
   * operation (on PostgreSQL, two statements) whatever it takes.
   */
  let promptAfterClaim = 0;
  const worthClaiming = () => windows.promptInFlight() * 2 <= promptAfterClaim;
  const stopListening = onAnnounce(() => {
    if (worthClaiming()) slotFreed?.();
  });
  const retention = startWebhookRetention({
    store: store.webhooks,
    retentionMs: config.retentionMs,
    logger: log,
    clock,
  });

  const pause = (ms: number, { onFreedSlot }: { onFreedSlot: boolean }) =>
    new Promise<void>((resolve) => {
      // An idle loop does not keep the process alive; the server does.
      const cancel = clock.setTimeout(done, ms, { keepAlive: false });
      function done() {
        cancel();
        wake = undefined;
        slotFreed = undefined;
        resolve();
      }
      wake = done;
      if (onFreedSlot) slotFreed = done;
    });

  /**
   * Signing keys by endpoint and stored secret: opening a sealed secret (AES-GCM) and decoding it
   * for every attempt would cost about as much as the signature. A rotation stores a new secret, so
   * it is a new entry; the map is emptied now and then, not to keep rotated-out keys for ever.
   */
  const signingKeys = new BoundedMap<string, KeyObject>(MAX_CACHED_SIGNING_KEYS);
  const signingKey = (endpointId: string, stored: string): KeyObject => {
    const cacheKey = `${endpointId} ${stored}`;
    let key = signingKeys.get(cacheKey);
    if (key === undefined) {
      key = secretKey(secrets.open(endpointId, stored));
      signingKeys.set(cacheKey, key);
    }
    return key;
  };
  /** Attempts that finished in this turn of the event loop, recorded together in one store operation. */
  let finished: { attempt: RecordedAttempt; resolve: (held: boolean) => void; reject: (error: unknown) => void }[] = [];
  const recordFinished = () => {
    const batch = finished;
    finished = [];
    store.webhooks.recordAttempts(batch.map(({ attempt }) => attempt)).then(
      (held) => {
        for (const [index, { resolve }] of batch.entries()) resolve(held[index] === true);
      },
      (error: unknown) => {
        for (const { reject } of batch) reject(error);
      },
    );
  };
  const record = (claim: ClaimedDelivery, result: AttemptResult): Promise<boolean> =>
    new Promise((resolve, reject) => {
      finished.push({ attempt: { claim, result }, resolve, reject });
      if (finished.length === 1) setImmediate(recordFinished);
    });

  /** Attempts, POSTs and records one delivery; tells `windows` what the receiver's answer says of it. */
  const attempt = async (delivery: ClaimedDelivery, started: Attempt): Promise<void> => {
    const { type, payloadFormat, data, createdAt } = delivery;
    // Timestamped when the event was announced: every attempt carries the same body.
    const body = webhookEventJson(type, payloadFormat, data, createdAt);
    // The new secret, and those rotated out while their grace lasts: receivers switch without a gap.
    const keys = [delivery.secret, ...(delivery.previousSecrets ?? [])].map((stored) =>
      signingKey(delivery.endpointId, stored),
    );
    const headers: Record<string, string> = signedHeaders(keys, delivery.id, Math.floor(clock.now() / 1000), body);
    headers[WEBHOOK_EVENT_TYPE_HEADER] = type;
    const span = tracing?.deliveryAttempt(delivery.traceparent, {
      endpointId: delivery.endpointId,
      webhookId: delivery.id,
      attempt: delivery.attempts + 1,
    });
    // The receiver continues the create's trace: from this attempt's span when traced here, else
    // from the create's own span as stored (the create was traced by another process).
    const traceparent = span ? span.traceparent : delivery.traceparent;
    if (traceparent !== undefined) headers.traceparent = traceparent;
    const sentAt = clock.now();
    const outcome = await postWebhook(delivery.url, body, headers, {
      timeoutMs: config.timeoutMs,
      allowPrivate: config.allowPrivate,
      agents,
      clock,
    });
    const recovered = windows.finished(
      started,
      signalOf(outcome, clock.now() - sentAt),
      'retryAfterMs' in outcome ? outcome.retryAfterMs : undefined,
    );
    if (recovered) expedite(delivery.endpointId);
    const result = attemptResult(outcome, delivery.attempts, config.retryDelaysMs, random);
    let recorded: DeliveryOutcome = result.outcome;
    try {
      if (!(await record(delivery, result))) recorded = 'lost_lease';
    } catch (error) {
      span?.end('unrecorded', outcome.status);
      // The lease runs out and the delivery is attempted again: at least once, never lost.
      log.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded');
      return;
    }
    span?.end(recorded, outcome.status);
    counted?.countAttempt(recorded);
    if (result.outcome === 'delivered') {
      disableCheckedAt.delete(delivery.endpointId);
      if (!debug) return;
    } else if (recorded !== 'lost_lease') await applyDisableRule(delivery.endpointId, result);
    // Never the URL (it may carry a receiver's token) and never the secret.
    const fields = {
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      plantId: delivery.plantId.toString(),
      attempt: delivery.attempts + 1,
      outcome: recorded,
      ...('status' in result && result.status !== undefined && { status: result.status }),
    };
    if (result.outcome === 'delivered') log.debug(fields, 'webhook delivered');
    else if (result.outcome === 'retry')
      log.info({ ...fields, error: result.error, retryInMs: result.retryInMs }, 'webhook attempt failed; will retry');
    else
      log.warn(
        { ...fields, error: result.error },
        result.outcome === 'gone' ? 'webhook endpoint gone; disabled' : 'webhook delivery failed; no retry left',
      );
  };

  /**
   * Makes the endpoint's retries due now, in batches, once it answers again after an outage: the
   * events that failed during it go at once instead of at the later delays of their schedule (see
   * WebhookStore.expediteRetries), then the loop claims them.
   */
  const expedite = (endpointId: string): void => {
    if (expediting.has(endpointId)) return;
    const pass = (async () => {
      let made = 0;
      for (;;) {
        const batch = await store.webhooks.expediteRetries(endpointId, EXPEDITE_BATCH);
        made += batch;
        if (batch < EXPEDITE_BATCH || stopping) break;
      }
      if (made === 0) return;
      log.info({ endpointId, retries: made }, 'webhook endpoint answers again; its retries go now');
      wake?.();
    })()
      .catch((error: unknown) => {
        // They keep their schedule.
        log.warn({ err: error, endpointId }, 'could not bring the retries of a recovered webhook endpoint forward');
      })
      .finally(() => expediting.delete(endpointId));
    expediting.set(endpointId, pass);
  };

  /**
   * The disable rule, the same for every store: 410 Gone disables at once; otherwise an endpoint
   * whose every attempt has failed for `disableAfterMs` is disabled. Its pending deliveries wait.
   */
  const applyDisableRule = async (endpointId: string, result: AttemptResult): Promise<void> => {
    try {
      if (result.outcome === 'gone') {
        await store.webhooks.disableEndpoint(endpointId, GONE_REASON);
        return;
      }
      const now = clock.now();
      if (now - (disableCheckedAt.get(endpointId) ?? 0) < Math.min(DISABLE_CHECK_INTERVAL_MS, disableAfterMs)) return;
      disableCheckedAt.set(endpointId, now);
      const reason = failingReason(disableAfterMs);
      if (await store.webhooks.disableEndpoint(endpointId, reason, new Date(now - disableAfterMs))) {
        disableCheckedAt.delete(endpointId);
        log.warn({ endpointId, disableAfterMs }, 'webhook endpoint failed every delivery for too long; disabled');
      }
    } catch (error) {
      // The next failed attempt asks again.
      log.warn({ err: error, endpointId }, 'could not apply the webhook disable rule');
    }
  };

  /** The next poll, or sooner when an endpoint's pause ends or a slot frees without an attempt ending. */
  const nextPoll = () => Math.min(pollIntervalMs, windows.nextChangeInMs() ?? pollIntervalMs);

  const run = async (): Promise<void> => {
    while (!stopping) {
      const plan = windows.plan({ concurrency });
      // An attempt's slot is free once its receiver answered, while its outcome is still being
      // recorded: what this process holds is bounded apart.
      const limit = Math.min(plan.limit, concurrency + lingering - inFlight.size);
      if (limit <= 0) {
        // Until an attempt ends, or the oldest prompt one turns slow and frees its slot.
        await pause(nextPoll(), { onFreedSlot: true });
        continue;
      }
      let claimed: ClaimedDelivery[];
      try {
        claimed = await store.webhooks.claimDue({ ...plan, limit, leaseMs });
      } catch (error) {
        if (stopping) break;
        log.warn({ err: error }, 'could not claim webhook deliveries; trying again shortly');
        await pause(STORE_FAILURE_BACKOFF_MS, { onFreedSlot: false });
        continue;
      }
      for (const delivery of claimed) {
        const started = windows.started(delivery.endpointId);
        const running = attempt(delivery, started).catch((error: unknown) => {
          log.error({ err: error, deliveryId: delivery.id }, 'webhook attempt failed unexpectedly');
        });
        inFlight.add(running);
        void running.finally(() => {
          // Its slot back even when the attempt failed before the receiver could say anything.
          windows.finished(started, 'neutral');
          inFlight.delete(running);
          // A freed slot may take the next due delivery: at once when it was a lingering one (slow
          // endpoints take those in turn), else once enough are free for a batch.
          if (started.lingering || worthClaiming()) slotFreed?.();
        });
      }
      promptAfterClaim = windows.promptInFlight();
      if (stopping) break;
      // A full claim suggests more are due; otherwise wait, unless an attempt finishes or plants are
      // announced first.
      if (claimed.length < limit) await pause(nextPoll(), { onFreedSlot: true });
    }
  };

  const running = run();

  return {
    async stop() {
      stopping = true;
      stopListening();
      const retained = retention.stop();
      wake?.();
      // Attempts in flight may finish and be recorded before the store closes; a slow receiver is
      // cut off after the grace, its attempt recorded as failed and retried later.
      let cancelGrace = () => {};
      const grace = new Promise((resolve) => {
        cancelGrace = clock.setTimeout(() => resolve(undefined), stopGraceMs);
      });
      await Promise.race([Promise.allSettled([running, ...inFlight]), grace]);
      cancelGrace();
      agents.http.destroy();
      agents.https.destroy();
      await running;
      await Promise.allSettled([...inFlight, ...expediting.values()]);
      await retained;
    },
  };
};
