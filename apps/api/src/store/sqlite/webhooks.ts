/**
 * The webhook operations of the embedded store, endpoints and the outbox: their SQL, what the
 * database thread runs, and how the store decodes it (sqlite-webhook-store.ts submits them). The
 * thread imports this module: it stays free of the contract and of the store's side.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { WebhookEventType, WebhookPayloadFormat } from '@org/plant-contract';
import { advancedTat, rateRoom, rescaledTat, roomInMs } from '../rate-limit.ts';
import type { DeliveryRow, EndpointRow } from '../store-shared.ts';
import {
  ENDPOINT_COLUMNS,
  FAN_OUT_PER_CLAIMED,
  FAN_OUT_ROWS,
  registeredEndpoint,
  toDelivery,
  toEndpoint,
} from '../store-shared.ts';
import {
  type ClaimedDelivery,
  type CreateEndpointOutcome,
  DISABLED_BY_REQUEST,
  type EndpointBacklog,
  type EndpointSecrets,
  parseDeliveryId,
  type SigningSecrets,
  type UpdateEndpointOutcome,
  type WebhookBacklog,
} from '../webhook-store.ts';
import { operation, type Thread } from './operation.ts';

/**
 * A claimed delivery as the thread sends it: an array, not an object. node:sqlite's rows are
 * dictionary objects, slow to serialize, and the structured clone that carries them to the delivery
 * thread rebuilds each object property by property, map transition after map transition.
 */
export type ClaimedRow = [
  id: string,
  seq: bigint,
  endpointId: string,
  url: string,
  secret: string,
  /** JSON: those rotated out whose grace lasts; null when there is none. */
  previousSecrets: string | null,
  plantId: bigint,
  /** The event's data as text (see ClaimedDelivery). */
  data: string,
  attempts: number | bigint,
  createdAt: number | bigint,
  traceparent: string | null,
  type: WebhookEventType,
  payloadFormat: WebhookPayloadFormat,
];

type SecretsRow = { id: string; secret: string; previous_secrets: string | null };

/** A JSON array of secrets as SQLite's json_group_array writes it. */
const secretList = (json: string): string[] => JSON.parse(json) as string[];

const toClaimed = (
  [
    id,
    seq,
    endpointId,
    url,
    secret,
    previousSecrets,
    plantId,
    data,
    attempts,
    createdAt,
    traceparent,
    type,
    payloadFormat,
  ]: ClaimedRow,
  leaseToken: string,
): ClaimedDelivery => {
  // The optional fields are set last, not spread into the literal: every property after a spread
  // is defined through a slow runtime call, once per delivery.
  const claimed: ClaimedDelivery = {
    id,
    seq,
    endpointId,
    url,
    secret,
    type,
    payloadFormat,
    plantId,
    data,
    attempts: Number(attempts),
    leaseToken,
    createdAt: new Date(Number(createdAt)),
  };
  if (previousSecrets !== null) claimed.previousSecrets = secretList(previousSecrets);
  if (traceparent !== null) claimed.traceparent = traceparent;
  return claimed;
};

/*
 * A LIMIT taken from a parameter is written `LIMIT ? + 0`. SQLite's planner reads the value of a
 * bare `LIMIT ?`, so binding it again (every run) makes the statement parse and plan itself anew at
 * its next step: a step of the delivery claim cost 4.5 times as many instructions (callgrind), and
 * re-preparing was a fifth of this thread's work while delivering. A sum is only computed when the
 * statement runs; the plans are the same (EXPLAIN QUERY PLAN).
 */

/**
 * The secrets rotated out whose grace lasts at :now, newest first, as a JSON array; null when there
 * is none (read at no cost for an endpoint never rotated).
 */
const livePreviousSecrets = (column: string) => `CASE WHEN ${column} IS NOT NULL THEN
  nullif((SELECT json_group_array(value ->> 0) FROM json_each(${column}) WHERE value ->> 1 > :now), '[]') END`;

/** The webhook statements: endpoints, and the outbox of deliveries. */
export const webhookStatements = (db: DatabaseSync) => {
  const prepare = (sql: string, bigInts = false, arrays = false) => {
    const statement = db.prepare(sql);
    if (bigInts) statement.setReadBigInts(true);
    if (arrays) statement.setReturnArrays(true);
    return statement;
  };
  const receivedTypes = prepare('SELECT DISTINCT event_types FROM webhook_endpoints WHERE enabled = 1', false, true);
  const settings = db.prepare('SELECT instance, legacy_instance, legacy_upto FROM webhook_settings').get() as {
    instance: string;
    legacy_instance: string;
    legacy_upto: number;
  };
  // The deliveries kept from before seqs were AUTOINCREMENT keep the instance they were issued under.
  const legacyUpTo = BigInt(settings.legacy_upto);
  /** The instance of the delivery `seq`. */
  const instanceOf = (seq: bigint): string => (seq <= legacyUpTo ? settings.legacy_instance : settings.instance);
  const prefix = `msg_${settings.instance}_`;
  /** A delivery's webhook-id: the instance and the sequence number. */
  const webhookId = (seq: bigint): string =>
    seq <= legacyUpTo ? `msg_${settings.legacy_instance}_${seq}` : `${prefix}${seq}`;
  /**
   * Rows with their webhook-id. Set on the row, not spread into a copy: node:sqlite's rows are
   * dictionary objects, which a spread copies slowly.
   */
  const withIds = <R extends { seq: bigint }>(rows: R[]): (R & { id: string })[] =>
    rows.map((row) => {
      const withId = row as R & { id: string };
      withId.id = webhookId(row.seq);
      return withId;
    });
  return {
    instanceOf,
    webhookId,
    withIds,
    /** The event types the enabled endpoints receive (see Thread.receiving). */
    receivedTypes: (): Set<WebhookEventType> =>
      new Set(
        (receivedTypes.all() as unknown as [string][]).flatMap(([types]) => types.split(',') as WebhookEventType[]),
      ),
    // Positional: binding by name cost twice as much per create (measured).
    announce: prepare(
      'INSERT INTO webhook_events (type, plant_id, data, created_at, traceparent) VALUES (?, ?, ?, ?, ?)',
    ),
    /** The last event of the next `limit` up to `last` to fan out, or null when there is none. */
    fanOutBound: prepare(
      'SELECT max(seq) AS upTo FROM (SELECT seq FROM webhook_events WHERE seq <= :last ORDER BY seq LIMIT :limit + 0)',
      true,
    ),
    lastEvent: prepare('SELECT max(seq) AS seq FROM webhook_events', true),
    eventUpTo: prepare('SELECT 1 FROM webhook_events WHERE seq <= ? LIMIT 1'),
    enabledCount: prepare('SELECT count(*) AS count FROM webhook_endpoints WHERE enabled = 1'),
    // An endpoint receives the events of its types announced since it was registered.
    fanOut: prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, type, plant_id, data, next_attempt_at, created_at, traceparent)
       SELECT ep.id, e.type, e.plant_id, e.data, e.created_at, e.created_at, e.traceparent
       FROM webhook_events e JOIN webhook_endpoints ep ON ep.enabled = 1 AND ep.created_at <= e.created_at
         AND ',' || ep.event_types || ',' LIKE '%,' || e.type || ',%'
       WHERE e.seq <= :upTo
       ORDER BY e.seq, ep.created_at, ep.id`,
    ),
    fannedOut: prepare('DELETE FROM webhook_events WHERE seq <= :upTo'),
    eventBacklog: prepare(
      `SELECT (SELECT count(*) FROM webhook_events) * (SELECT count(*) FROM webhook_endpoints WHERE enabled = 1) AS pending,
              (SELECT created_at FROM webhook_events ORDER BY seq LIMIT 1) AS oldest`,
    ),
    // An endpoint of the owner that has the URL already: nothing is inserted (the unique index).
    createEndpoint: prepare(
      `INSERT INTO webhook_endpoints (id, url, description, event_types, payload_format, rate_limit, secret, created_at, owner)
       SELECT :id, :url, :description, :eventTypes, :payloadFormat, :rateLimit, :secret, :now, :owner
       WHERE (SELECT count(*) FROM webhook_endpoints WHERE owner = :owner) < :perOwner
         AND (SELECT count(*) FROM webhook_endpoints) < :total
       ON CONFLICT DO NOTHING`,
    ),
    ownedCount: prepare('SELECT count(*) AS count FROM webhook_endpoints WHERE owner = ?'),
    urlHolder: prepare('SELECT id FROM webhook_endpoints WHERE owner = ? AND url = ? AND duplicate_url = 0'),
    // Enabling a disabled endpoint forgets why it was disabled and its failing streak, so that its
    // pending deliveries are claimed again and auto-disable counts afresh. The right-hand sides
    // read the row as it was.
    updateEndpoint: prepare(
      `UPDATE OR IGNORE webhook_endpoints SET
         url = coalesce(:url, url),
         duplicate_url = CASE WHEN :url IS NULL THEN duplicate_url ELSE 0 END,
         description = CASE WHEN :setDescription = 1 THEN :description ELSE description END,
         enabled = coalesce(:enabled, enabled),
         event_types = coalesce(:eventTypes, event_types),
         payload_format = coalesce(:payloadFormat, payload_format),
         rate_limit = CASE WHEN :setRate = 1 THEN :rateLimit ELSE rate_limit END,
         rate_tat = CASE WHEN :setRate = 1 THEN :rateTat ELSE rate_tat END,
         disabled_reason = CASE
           WHEN :enabled = 1 THEN NULL
           WHEN :enabled = 0 AND enabled = 1 THEN :disabledReason
           ELSE disabled_reason END,
         failing_since = CASE WHEN :enabled = 1 AND enabled = 0 THEN NULL ELSE failing_since END
       WHERE id = :id`,
    ),
    secretsOf: prepare('SELECT secret, previous_secrets FROM webhook_endpoints WHERE id = ?'),
    rotateSecret: prepare('UPDATE webhook_endpoints SET previous_secrets = :previous, secret = :secret WHERE id = :id'),
    requeueFailed: prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = :now, finished_at = NULL
       WHERE seq IN (
         SELECT seq FROM webhook_deliveries
         WHERE endpoint_id = :id AND status = 'failed' AND created_at >= :since
         ORDER BY created_at LIMIT :limit + 0
       ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = :id AND enabled = 1)`,
    ),
    // Leased deliveries are due at their lease's end: the lease keeps them out.
    expediteRetries: prepare(
      `UPDATE webhook_deliveries SET next_attempt_at = :now
       WHERE seq IN (
         SELECT seq FROM webhook_deliveries
         WHERE endpoint_id = :id AND status = 'pending' AND next_attempt_at > :now AND attempts >= 2
           AND (lease_until IS NULL OR lease_until <= :now)
         ORDER BY next_attempt_at LIMIT :limit + 0
       )`,
    ),
    retryDelivery: prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = :now, delivered_at = NULL, finished_at = NULL
       WHERE seq = :seq AND endpoint_id = :id
         AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = :id AND enabled = 1)`,
    ),
    endpointSecrets: prepare(
      `SELECT id, secret, (SELECT json_group_array(value ->> 0) FROM json_each(previous_secrets)) AS previous_secrets
       FROM webhook_endpoints ORDER BY id`,
    ),
    signingSecrets: prepare(
      `SELECT secret, ${livePreviousSecrets('previous_secrets')} AS previous_secrets FROM webhook_endpoints WHERE id = :id`,
    ),
    replaceSecret: prepare('UPDATE webhook_endpoints SET secret = :to WHERE id = :id AND secret = :from'),
    // A secret is one JSON string of the array, written as json_quote writes it.
    replacePreviousSecret: prepare(
      `UPDATE webhook_endpoints SET previous_secrets = replace(previous_secrets, json_quote(:from), json_quote(:to))
       WHERE id = :id AND instr(previous_secrets, json_quote(:from)) > 0`,
    ),
    listEndpoints: prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`),
    listOwnedEndpoints: prepare(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE owner = ? ORDER BY created_at, id`,
    ),
    getEndpoint: prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ?`),
    deleteEndpoint: prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
    deleteDeliveries: prepare(
      'DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE endpoint_id = ? LIMIT ? + 0)',
    ),
    listDeliveries: prepare(
      `SELECT seq, endpoint_id, type, plant_id, status, attempts, last_status, last_error, next_attempt_at, delivered_at, created_at
       FROM webhook_deliveries WHERE endpoint_id = ? AND seq < ? ORDER BY seq DESC LIMIT ? + 0`,
      true,
    ),
    rateOf: prepare('SELECT rate_limit, rate_tat FROM webhook_endpoints WHERE id = ?'),
    claimEndpoints: prepare('SELECT id, rate_limit, rate_tat FROM webhook_endpoints WHERE enabled = 1'),
    advanceRate: prepare('UPDATE webhook_endpoints SET rate_tat = ? WHERE id = ?'),
    dueOf: prepare(
      `SELECT seq, next_attempt_at AS due FROM webhook_deliveries
       WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at LIMIT ? + 0`,
      true,
    ),
    lease: prepare(
      'UPDATE webhook_deliveries SET lease_until = :until, next_attempt_at = :until, lease_token = :token WHERE seq = :seq',
    ),
    // In the order of the protocol's ClaimedRow, after its webhook-id.
    claimed: prepare(
      `SELECT d.seq, d.endpoint_id, e.url, e.secret, ${livePreviousSecrets('e.previous_secrets')} AS previous_secrets,
              d.plant_id, d.data, d.attempts, d.created_at, d.traceparent, d.type, e.payload_format
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.seq = :seq`,
      true,
      true,
    ),
    record: prepare(
      `UPDATE webhook_deliveries SET
         status = CASE :outcome WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'failed' END,
         attempts = attempts + 1, last_status = :status, last_error = :error, next_attempt_at = :next,
         delivered_at = CASE :outcome WHEN 'delivered' THEN :now END,
         finished_at = CASE :outcome WHEN 'retry' THEN NULL ELSE :now END, lease_until = NULL, lease_token = NULL
       WHERE seq = :seq AND lease_token = :token AND status = 'pending'`,
    ),
    disableForDeletion: prepare('UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?'),
    disable: prepare(
      `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = :reason
       WHERE id = :id AND enabled = 1 AND (:since IS NULL OR failing_since <= :since)`,
    ),
    // Written only when the streak starts or ends, not at every attempt.
    streakEnds: prepare('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL'),
    streakStarts: prepare('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL'),
    pruneFinished: prepare(
      `DELETE FROM webhook_deliveries WHERE seq IN (
         SELECT seq FROM webhook_deliveries WHERE finished_at < ? ORDER BY finished_at LIMIT ? + 0
       )`,
    ),
    // A disabled endpoint's pending deliveries wait for it to be enabled again: not a backlog.
    backlog: prepare(
      `SELECT count(*) AS pending, min(d.created_at) AS oldest
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.status = 'pending' AND e.enabled = 1`,
    ),
    // The same rows by endpoint, and the events still to be fanned out: each is pending for every
    // enabled endpoint registered by then (see fanOut), the first of them its oldest.
    backlogByEndpoint: prepare(
      `SELECT id, min(oldest) AS oldest FROM (
         SELECT d.endpoint_id AS id, min(d.created_at) AS oldest
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.status = 'pending' AND e.enabled = 1
         GROUP BY d.endpoint_id
         UNION ALL
         SELECT e.id, (SELECT ev.created_at FROM webhook_events ev WHERE ev.created_at >= e.created_at ORDER BY ev.seq LIMIT 1)
         FROM webhook_endpoints e WHERE e.enabled = 1
       ) WHERE oldest IS NOT NULL GROUP BY id ORDER BY oldest, id LIMIT ?`,
    ),
  };
};

/** A claim's arguments: the time, the most to claim, the lease's end and token, the rooms (see claimDue). */
type Claim = [now: number, limit: number, until: number, token: string, perEndpoint: number, room: (string | number)[]];

type ClaimEndpoint = { id: string; rate_limit: number | null; rate_tat: number | null };

/** A rate-limited endpoint during a claim: its limit, its TAT before the claim, what the claim took. */
type Limited = { rate: number; tat: number | null; claimed: number };

/**
 * Leases up to `limit` due deliveries, taking turns across the enabled endpoints: every
 * endpoint's oldest due delivery before any endpoint's second, each within its room and its rate
 * limit (whose TAT it advances in the same transaction) → the leased seqs, and in how many ms the
 * first rate-limited endpoint it left short of room has room again (null when none).
 */
const claimFairly = (
  { webhooks }: Thread,
  ...[now, limit, until, token, perEndpoint, room]: Claim
): [chosen: { seq: bigint; endpoint: string }[], roomInMs: number | null] => {
  const listed = new Map<string, number>();
  for (let index = 0; index < room.length; index += 2) listed.set(room[index] as string, room[index + 1] as number);
  const candidates: { seq: bigint; due: bigint; turn: number; endpoint: string }[] = [];
  const limited = new Map<string, Limited>();
  for (const { id, rate_limit: rate, rate_tat: tat } of webhooks.claimEndpoints.all() as ClaimEndpoint[]) {
    let most = listed.get(id) ?? perEndpoint;
    if (rate !== null) {
      limited.set(id, { rate, tat, claimed: 0 });
      most = Math.min(most, rateRoom(now, tat, rate));
    }
    if (most <= 0) continue;
    const due = webhooks.dueOf.all(id, now, Math.min(most, limit)) as { seq: bigint; due: bigint }[];
    for (const [turn, row] of due.entries()) candidates.push({ seq: row.seq, due: row.due, turn, endpoint: id });
  }
  candidates.sort((a, b) => a.turn - b.turn || (a.due < b.due ? -1 : a.due > b.due ? 1 : 0));
  const chosen = candidates.slice(0, limit);
  for (const { seq, endpoint } of chosen) {
    webhooks.lease.run({ seq, until, token });
    const rated = limited.get(endpoint);
    if (rated !== undefined) rated.claimed += 1;
  }
  let soonest: number | null = null;
  for (const [id, { rate, tat, claimed }] of limited) {
    const advanced = claimed === 0 ? tat : advancedTat(now, tat, rate, claimed);
    if (claimed > 0) webhooks.advanceRate.run(advanced, id);
    const wait = advanced === null ? undefined : roomInMs(now, advanced, rate);
    if (wait !== undefined && (soonest === null || wait < soonest)) soonest = wait;
  }
  return [chosen, soonest];
};

/**
 * Turns up to `limit` events (up to the event `last`) into deliveries, oldest first, and never
 * more than FAN_OUT_ROWS deliveries at once.
 */
const fanOut = (thread: Thread, limit: number, last = BigInt(Number.MAX_SAFE_INTEGER)): boolean => {
  const { webhooks } = thread;
  const { count } = webhooks.enabledCount.get() as { count: number };
  const events = Math.max(1, Math.min(limit, Math.floor(FAN_OUT_ROWS / Math.max(1, count))));
  const { upTo } = webhooks.fanOutBound.get({ limit: events, last }) as { upTo: bigint | null };
  if (upTo === null) return false;
  thread.beginWrite();
  webhooks.fanOut.run({ upTo });
  webhooks.fannedOut.run({ upTo });
  return true;
};

/** The writes of the webhook operations that do not change endpoints: outbox or secrets. */
const write = { writes: true, outbox: false, announces: false } as const;
/** The outbox's own work, in its lane (see `SqlitePlantStore`). */
const outboxWrite = { writes: true, outbox: true, announces: false } as const;
const read = { writes: false, outbox: false, announces: false } as const;
/** The outbox's reads (metrics), in its lane. */
const outboxRead = { writes: false, outbox: true, announces: false } as const;

/** A write that changes endpoints: whether a create announces is read again after its batch. */
const changingEndpoints = (thread: Thread): void => {
  thread.beginWrite();
  thread.endpointsChanged = true;
};

export const webhookOperations = {
  /**
   * → its createdAt (Unix ms, this thread's clock) when registered; 'owner' when its owner has
   * `perOwner` endpoints already, 'total' when all owners have `total`; else `[holder]`, the id of
   * the owner's endpoint that has the URL (the unique index refused it).
   */
  createEndpoint: operation({
    ...write,
    arity: 10,
    run: (
      thread: Thread,
      id: string,
      url: string,
      description: string | null,
      eventTypes: string,
      payloadFormat: WebhookPayloadFormat,
      rateLimit: number | null,
      secret: string,
      owner: string,
      perOwner: number,
      total: number,
    ): number | 'owner' | 'total' | [string] => {
      changingEndpoints(thread);
      const { webhooks, now } = thread;
      // Stamped by the clock that stamps the announcements (see NewStoredEndpoint).
      const values = {
        id,
        url,
        description,
        eventTypes,
        payloadFormat,
        rateLimit,
        secret,
        now,
        owner,
        perOwner,
        total,
      };
      if (webhooks.createEndpoint.run(values).changes === 1) return now;
      const holder = webhooks.urlHolder.get(owner, url) as { id: string } | undefined;
      if (holder !== undefined) return [holder.id];
      return (webhooks.ownedCount.get(owner) as { count: number }).count >= perOwner ? 'owner' : 'total';
    },
    decode: (
      {
        id,
        url,
        description,
        eventTypes,
        payloadFormat,
        rateLimit,
        owner,
      }: {
        id: string;
        url: string;
        description: string | undefined;
        eventTypes: WebhookEventType[];
        payloadFormat: WebhookPayloadFormat;
        rateLimit: number | undefined;
        owner: string;
      },
      result,
    ): CreateEndpointOutcome => {
      if (typeof result === 'number') {
        return {
          outcome: 'created',
          endpoint: registeredEndpoint(
            { id, url, description, rateLimit, owner },
            eventTypes,
            payloadFormat,
            new Date(result),
          ),
        };
      }
      if (result === 'owner') return { outcome: 'too-many' };
      if (result === 'total') return { outcome: 'too-many-in-all' };
      return { outcome: 'url-taken', holder: result[0] };
    },
  }),
  /**
   * Changes what is not null (`setDescription` 1: the description, null removing it; `setRate` 1:
   * the rate limit at `now`, null removing it) → the endpoint's row; null when there is none; else
   * the id of the endpoint that has the URL.
   */
  updateEndpoint: operation({
    ...write,
    arity: 10,
    run: (
      thread: Thread,
      id: string,
      url: string | null,
      setDescription: number,
      description: string | null,
      enabled: number | null,
      eventTypes: string | null,
      payloadFormat: WebhookPayloadFormat | null,
      setRate: number,
      rateLimit: number | null,
      now: number,
    ): EndpointRow | string | null => {
      changingEndpoints(thread);
      const { webhooks } = thread;
      const rate = webhooks.rateOf.get(id) as { rate_limit: number | null; rate_tat: number | null } | undefined;
      const rateTat = rate === undefined ? null : rescaledTat(now, rate.rate_tat, rate.rate_limit, rateLimit);
      // The events announced before a change of types go out by the types they were announced under.
      let fanning = eventTypes !== null;
      while (fanning) fanning = fanOut(thread, Number.MAX_SAFE_INTEGER);
      const { changes } = webhooks.updateEndpoint.run({
        id,
        url,
        setDescription,
        description,
        enabled,
        eventTypes,
        payloadFormat,
        setRate,
        rateLimit,
        rateTat,
        disabledReason: DISABLED_BY_REQUEST,
      });
      const row = (webhooks.getEndpoint.get(id) as unknown as EndpointRow | undefined) ?? null;
      if (changes === 1 || row === null) return row;
      // OR IGNORE skipped the row: the unique URL index refused it.
      return (webhooks.urlHolder.get(row.owner, url) as { id: string }).id;
    },
    decode: (_: undefined, result): UpdateEndpointOutcome => {
      if (result === null) return { outcome: 'not-found' };
      if (typeof result === 'string') return { outcome: 'url-taken', holder: result };
      return { outcome: 'updated', endpoint: toEndpoint(result) };
    },
  }),
  /**
   * → whether the endpoint exists (its secret is then `secret`; the current one signs too until
   * `now` + `graceMs`, beside those rotated out before whose grace lasts, `most` in all).
   */
  rotateSecret: operation({
    ...write,
    arity: 5,
    run: (thread: Thread, id: string, secret: string, graceMs: number, most: number, now: number): boolean => {
      const { webhooks } = thread;
      const row = webhooks.secretsOf.get(id) as Omit<SecretsRow, 'id'> | undefined;
      if (row === undefined) return false;
      thread.beginWrite();
      const kept = (
        row.previous_secrets === null ? [] : (JSON.parse(row.previous_secrets) as [string, number][])
      ).filter(([, until]) => until > now);
      const previous = JSON.stringify([[row.secret, now + graceMs], ...kept].slice(0, most));
      return webhooks.rotateSecret.run({ id, secret, previous }).changes === 1;
    },
  }),
  /** → how many failed deliveries created at or after `since` are pending again, due now. */
  requeueFailed: operation({
    ...write,
    arity: 4,
    run: (thread: Thread, id: string, since: number, limit: number, now: number): number => {
      thread.beginWrite();
      return Number(thread.webhooks.requeueFailed.run({ id, since, limit, now }).changes);
    },
  }),
  /** → how many of the endpoint's retries are due now (see WebhookStore.expediteRetries). */
  expediteRetries: operation({
    ...write,
    arity: 3,
    run: (thread: Thread, id: string, limit: number, now: number): number => {
      thread.beginWrite();
      return Number(thread.webhooks.expediteRetries.run({ id, limit, now }).changes);
    },
  }),
  /** → whether the delivery exists (it is then pending and due now). */
  retryDelivery: operation({
    ...write,
    arity: 3,
    run: (thread: Thread, id: string, deliveryId: string, now: number): boolean => {
      const { webhooks } = thread;
      const parsed = parseDeliveryId(deliveryId);
      if (parsed === undefined || parsed.instance !== webhooks.instanceOf(parsed.seq)) return false;
      // A delivery id exists only once its event is fanned out: nothing to fan out first.
      thread.beginWrite();
      return webhooks.retryDelivery.run({ id, seq: parsed.seq, now }).changes === 1;
    },
  }),
  /** → every endpoint's secrets as stored. */
  endpointSecrets: operation({
    ...read,
    arity: 0,
    // json_group_array answers [] for an endpoint never rotated: every row has a list.
    run: (thread: Thread): (SecretsRow & { previous_secrets: string })[] =>
      thread.webhooks.endpointSecrets.all() as unknown as (SecretsRow & { previous_secrets: string })[],
    decode: (_: undefined, rows) =>
      rows.map(
        ({ id, secret, previous_secrets }): EndpointSecrets => ({
          id,
          secret,
          previousSecrets: secretList(previous_secrets),
        }),
      ),
  }),
  /** → the endpoint's signing secrets now, or undefined when there is no such endpoint. */
  signingSecrets: operation({
    ...read,
    arity: 2,
    // null, not undefined, for no row: as the other operations answer nothing across the thread.
    run: (thread: Thread, id: string, now: number): Omit<SecretsRow, 'id'> | null =>
      (thread.webhooks.signingSecrets.get({ id, now }) as Omit<SecretsRow, 'id'> | undefined) ?? null,
    decode: (_: undefined, row): SigningSecrets | undefined =>
      row === null
        ? undefined
        : row.previous_secrets === null
          ? { secret: row.secret }
          : { secret: row.secret, previousSecrets: secretList(row.previous_secrets) },
  }),
  /** → whether the stored secret was still `from` (it is then `to`). */
  replaceSecret: operation({
    ...write,
    arity: 4,
    run: (thread: Thread, id: string, which: 'secret' | 'previousSecret', from: string, to: string): boolean => {
      thread.beginWrite();
      const { db, webhooks } = thread;
      const statement = which === 'secret' ? webhooks.replaceSecret : webhooks.replacePreviousSecret;
      // The plain secret being sealed must not linger in the page's free space (secure_delete
      // zeroes it); the next checkpoint (at the latest, closing the store) carries that page into
      // the database file.
      db.exec('PRAGMA secure_delete = ON');
      try {
        return statement.run({ id, from, to }).changes === 1;
      } finally {
        db.exec('PRAGMA secure_delete = OFF');
      }
    },
  }),
  /** → endpoint rows, oldest first. */
  /** → the endpoints of `owner`, or every owner's when null. */
  listEndpoints: operation({
    ...read,
    arity: 1,
    run: (thread: Thread, owner: string | null): EndpointRow[] =>
      (owner === null
        ? thread.webhooks.listEndpoints.all()
        : thread.webhooks.listOwnedEndpoints.all(owner)) as unknown as EndpointRow[],
    decode: (_: undefined, rows) => rows.map(toEndpoint),
  }),
  getEndpoint: operation({
    ...read,
    arity: 1,
    run: (thread: Thread, id: string): EndpointRow | null =>
      (thread.webhooks.getEndpoint.get(id) as unknown as EndpointRow | undefined) ?? null,
    decode: (_: undefined, row) => (row === null ? undefined : toEndpoint(row)),
  }),
  /**
   * → null when there is no such endpoint; else disables it and deletes up to `batch` of its
   * deliveries, then the endpoint once none is left: true when deleted, false to ask again.
   */
  deleteEndpoint: operation({
    ...outboxWrite,
    arity: 2,
    run: (thread: Thread, id: string, batch: number): boolean | null => {
      changingEndpoints(thread);
      const { webhooks } = thread;
      // Disabled first, so that nothing more is fanned out to it while its deliveries go in batches.
      if (webhooks.disableForDeletion.run(id).changes === 0) return null;
      if (Number(webhooks.deleteDeliveries.run(id, batch).changes) === batch) return false;
      webhooks.deleteEndpoint.run(id);
      return true;
    },
  }),
  /** → delivery rows newest first (before the key `before`), or null when there is no such endpoint. */
  listDeliveries: operation({
    ...read,
    arity: 3,
    run: (thread: Thread, id: string, limit: number, before: bigint): DeliveryRow[] | null => {
      const { webhooks } = thread;
      if (webhooks.getEndpoint.get(id) === undefined) return null;
      return webhooks.withIds(
        webhooks.listDeliveries.all(id, before, limit) as { seq: bigint }[],
      ) as unknown as DeliveryRow[];
    },
    decode: (_: undefined, rows) => (rows === null ? undefined : rows.map(toDelivery)),
  }),
  /**
   * → claimed delivery rows, and in how many ms a rate-limited endpoint left short of room has room
   * again (or null); `room` is [endpoint id, most to claim of it, …], `perEndpoint` for the others.
   */
  claimDue: operation({
    ...outboxWrite,
    arity: 6,
    run: (thread: Thread, ...claim: Claim): [rows: ClaimedRow[], roomInMs: number | null] => {
      const [now, limit] = claim;
      thread.beginWrite();
      // A few times what is claimed, so that fanning out keeps ahead of delivering, and stays small
      // while the thread steps back for requests.
      fanOut(thread, FAN_OUT_PER_CLAIMED * limit);
      const { webhooks } = thread;
      const rows: ClaimedRow[] = [];
      const [chosen, roomInMs] = claimFairly(thread, ...claim);
      for (const { seq } of chosen) {
        const row = webhooks.claimed.get({ seq, now }) as unknown as ClaimedRow | undefined;
        if (row === undefined) continue;
        // The webhook-id first, as ClaimedRow has it.
        row.unshift(webhooks.webhookId(seq));
        rows.push(row);
      }
      return [rows, roomInMs];
    },
    decode: (
      { token, onRateLimited }: { token: string; onRateLimited: ((roomInMs: number) => void) | undefined },
      [rows, roomInMs],
    ) => {
      if (roomInMs !== null) onRateLimited?.(roomInMs);
      return rows.map((row) => toClaimed(row, token));
    },
  }),
  /**
   * `records` is [seq, lease token, outcome, status | null, error | null, next attempt (ms) | null,
   * endpoint id, …] → whether each lease held, in order (then its endpoint's failing streak starts
   * or ends).
   */
  recordAttempts: operation({
    ...outboxWrite,
    arity: 2,
    run: (thread: Thread, now: number, records: unknown[]): boolean[] => {
      thread.beginWrite();
      const { webhooks } = thread;
      const held: boolean[] = [];
      for (let index = 0; index < records.length; index += 7) {
        const outcome = records[index + 2] as string;
        const endpoint = records[index + 6] as string;
        const recorded =
          webhooks.record.run({
            seq: records[index] as bigint,
            token: records[index + 1] as string,
            outcome,
            status: records[index + 3] as number | null,
            error: records[index + 4] as string | null,
            next: records[index + 5] as number | null,
            now,
          }).changes === 1;
        if (recorded) {
          if (outcome === 'delivered') webhooks.streakEnds.run(endpoint);
          else webhooks.streakStarts.run(now, endpoint);
        }
        held.push(recorded);
      }
      return held;
    },
  }),
  /** → [pending count, oldest created_at (ms) | null]. */
  backlog: operation({
    ...outboxRead,
    arity: 0,
    run: ({ webhooks }: Thread): [pending: number, oldest: number | null] => {
      type Backlog = { pending: number | bigint; oldest: number | bigint | null };
      const deliveries = webhooks.backlog.get() as Backlog;
      const events = webhooks.eventBacklog.get() as Backlog;
      const oldest = [deliveries.oldest, Number(events.pending) > 0 ? events.oldest : null]
        .filter((value) => value !== null)
        .map(Number);
      return [Number(deliveries.pending) + Number(events.pending), oldest.length === 0 ? null : Math.min(...oldest)];
    },
    decode: (_: undefined, [pending, oldest]): WebhookBacklog => ({
      pending,
      oldestPendingAt: oldest === null ? undefined : new Date(oldest),
    }),
  }),
  /** → [endpoint id, oldest pending created_at (ms), …], the oldest first, at most `limit` endpoints. */
  backlogByEndpoint: operation({
    ...outboxRead,
    arity: 1,
    run: ({ webhooks }: Thread, limit: number): (string | number)[] =>
      (webhooks.backlogByEndpoint.all(limit) as { id: string; oldest: number | bigint }[]).flatMap(({ id, oldest }) => [
        id,
        Number(oldest),
      ]),
    decode: (_: undefined, flat): EndpointBacklog[] => {
      const lag: EndpointBacklog[] = [];
      for (let index = 0; index < flat.length; index += 2)
        lag.push({ endpointId: flat[index] as string, oldestPendingAt: new Date(flat[index + 1] as number) });
      return lag;
    },
  }),
  /** → how many finished deliveries were deleted. */
  pruneFinished: operation({
    ...outboxWrite,
    arity: 2,
    run: (thread: Thread, before: number, limit: number): number => {
      thread.beginWrite();
      return Number(thread.webhooks.pruneFinished.run(before, limit).changes);
    },
  }),
  /**
   * Fans out a bounded batch of events up to `last` (null: the newest) → null once none up to it
   * is left, else the seq to ask again with.
   */
  fanOut: operation({
    ...outboxWrite,
    arity: 1,
    run: (thread: Thread, upTo: bigint | null): bigint | null => {
      const { webhooks } = thread;
      const last = upTo ?? (webhooks.lastEvent.get() as { seq: bigint | null }).seq;
      if (last === null) return null;
      fanOut(thread, Number.MAX_SAFE_INTEGER, last);
      return webhooks.eventUpTo.get(last) === undefined ? null : last;
    },
  }),
  /** → whether the endpoint was disabled now. */
  disableEndpoint: operation({
    ...outboxWrite,
    arity: 3,
    run: (thread: Thread, id: string, reason: string, since: number | null): boolean => {
      changingEndpoints(thread);
      return thread.webhooks.disable.run({ id, reason, since }).changes === 1;
    },
  }),
};
