/**
 * The SQL of the embedded store's webhook operations, endpoints and the outbox: every statement,
 * prepared once per database (webhooks.ts and webhook-outbox.ts run them). The thread imports this
 * module: it stays free of the contract and of the store's side.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { WebhookEventType } from '@org/plant-contract';
import { ENDPOINT_COLUMNS } from '../store-shared.ts';

/*
 * Some parameters are written `LIMIT ? + 0`, `? + 0` or `(? || '')`: the parameter's own value, in
 * a form SQLite's planner does not read. The planner reads the value of a bare `LIMIT ?`, and of a
 * bare parameter compared with a column of a table with partial indexes, so binding it again (every
 * run) makes the statement parse and plan itself anew at its next step: a step of the delivery claim
 * cost 4.5 times as many instructions with a bare LIMIT, and `claimed` about 70,000 instructions
 * more a run, a third of a delivery's cost on this thread (callgrind). The plans are the same
 * (EXPLAIN QUERY PLAN); statements-compiled-once.test.ts holds each statement to being compiled once.
 */

/**
 * The secrets rotated out whose grace lasts at `now` (a parameter), newest first, as a JSON array;
 * null when there is none (read at no cost for an endpoint never rotated).
 */
const livePreviousSecrets = (column: string, now: string) => `CASE WHEN ${column} IS NOT NULL THEN
  nullif((SELECT json_group_array(value ->> 0) FROM json_each(${column}) WHERE value ->> 1 > ${now}), '[]') END`;

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
         WHERE endpoint_id = (:id || '') AND status = 'failed' AND created_at >= :since
         ORDER BY created_at LIMIT :limit + 0
       ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = :id AND enabled = 1)`,
    ),
    // Leased deliveries are due at their lease's end: the lease keeps them out.
    expediteRetries: prepare(
      `UPDATE webhook_deliveries SET next_attempt_at = :now
       WHERE seq IN (
         SELECT seq FROM webhook_deliveries
         WHERE endpoint_id = (:id || '') AND status = 'pending' AND next_attempt_at > :now AND attempts >= 2
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
      `SELECT secret, ${livePreviousSecrets('previous_secrets', ':now')} AS previous_secrets FROM webhook_endpoints WHERE id = :id`,
    ),
    replaceSecret: prepare('UPDATE webhook_endpoints SET secret = :to WHERE id = :id AND secret = :from'),
    // A secret is one JSON string of the array, written as json_quote writes it.
    replacePreviousSecret: prepare(
      `UPDATE webhook_endpoints SET previous_secrets = replace(previous_secrets, json_quote(:from), json_quote(:to))
       WHERE id = :id AND instr(previous_secrets, json_quote(:from)) > 0`,
    ),
    listEndpoints: prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`),
    listOwnedEndpoints: prepare(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE owner = (? || '') ORDER BY created_at, id`,
    ),
    getEndpoint: prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ?`),
    deleteEndpoint: prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
    deleteDeliveries: prepare(
      'DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE endpoint_id = ? LIMIT ? + 0)',
    ),
    listDeliveries: prepare(
      `SELECT seq, endpoint_id, type, plant_id, status, attempts, last_status, last_error, next_attempt_at, delivered_at, created_at
       FROM webhook_deliveries WHERE endpoint_id = (? || '') AND seq < ? ORDER BY seq DESC LIMIT ? + 0`,
      true,
    ),
    rateOf: prepare('SELECT rate_limit, rate_tat FROM webhook_endpoints WHERE id = ?'),
    claimEndpoints: prepare('SELECT id, rate_limit, rate_tat FROM webhook_endpoints WHERE enabled = 1'),
    advanceRate: prepare('UPDATE webhook_endpoints SET rate_tat = ? WHERE id = ?'),
    dueOf: prepare(
      `SELECT seq, next_attempt_at AS due FROM webhook_deliveries
       WHERE endpoint_id = (? || '') AND status = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at LIMIT ? + 0`,
      true,
    ),
    // The statements each delivery runs bind by position (numbered where one is used twice):
    // binding by name looks every name up in the statement, each run.
    /** ?1 seq, ?2 until, ?3 token. */
    lease: prepare(
      'UPDATE webhook_deliveries SET lease_until = ?2, next_attempt_at = ?2, lease_token = ?3 WHERE seq = ?1',
    ),
    /** ?1 seq, ?2 now; the columns in the order of the protocol's ClaimedRow, after its webhook-id. */
    claimed: prepare(
      `SELECT d.seq, d.endpoint_id, e.url, e.secret, ${livePreviousSecrets('e.previous_secrets', '?2')} AS previous_secrets,
              d.plant_id, d.data, d.attempts, d.created_at, d.traceparent, d.type, e.payload_format
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.seq = ?1 + 0`,
      true,
      true,
    ),
    /** ?1 seq, ?2 token, ?3 outcome, ?4 status, ?5 error, ?6 next, ?7 now. */
    record: prepare(
      `UPDATE webhook_deliveries SET
         status = CASE ?3 WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'failed' END,
         attempts = attempts + 1, last_status = ?4, last_error = ?5, next_attempt_at = ?6,
         delivered_at = CASE ?3 WHEN 'delivered' THEN ?7 END,
         finished_at = CASE ?3 WHEN 'retry' THEN NULL ELSE ?7 END, lease_until = NULL, lease_token = NULL
       WHERE seq = ?1 AND lease_token = ?2 AND status = 'pending'`,
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
       ) WHERE oldest IS NOT NULL GROUP BY id ORDER BY oldest, id LIMIT ? + 0`,
    ),
  };
};
