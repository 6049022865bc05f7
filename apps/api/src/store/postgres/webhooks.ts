import { randomUUID } from 'node:crypto';
import { WEBHOOK_PREVIOUS_SECRETS_MAX, type WebhookEventType, type WebhookPayloadFormat } from '@org/plant-contract';
import {
  DELETE_BATCH,
  type DeliveryRow,
  ENDPOINT_COLUMNS,
  type EndpointRow,
  FAN_OUT_PER_CLAIMED,
  FAN_OUT_ROWS,
  LAST_SEQ,
  registeredEndpoint,
  registration,
  storedEventTypes,
  toDelivery,
  toEndpoint,
} from '../store-shared.ts';
import {
  AnnounceListeners,
  type AttemptResult,
  type ClaimedDelivery,
  type ClaimOptions,
  type CreateEndpointOutcome,
  DISABLED_BY_REQUEST,
  type EndpointBacklog,
  type EndpointCaps,
  type EndpointChanges,
  type EndpointSecrets,
  type NewStoredEndpoint,
  parseDeliveryId,
  type RecordedAttempt,
  type SigningSecrets,
  type StoredDelivery,
  type StoredEndpoint,
  type UpdateEndpointOutcome,
  type WebhookBacklog,
  type WebhookStore,
} from '../webhook-store.ts';
import type { DeadlinePool, Queryable } from './deadline-pool.ts';

type ClaimedRow = {
  id: string;
  seq: bigint;
  endpoint_id: string;
  url: string;
  secret: string;
  /** Those rotated out whose grace lasts; null when none ever was. */
  previous_secrets: string[] | null;
  plant_id: bigint;
  /** The event's data as JSON text, as its plant's statement wrote it. */
  data: string;
  attempts: number;
  created_at: Date;
  traceparent: string | null;
  type: WebhookEventType;
  payload_format: WebhookPayloadFormat;
  /** Only in the row that reports a rate-limited endpoint left short of room (every other column null). */
  room_ms: number | null;
};

/** unique_violation: here, the unique URL index. */
const UNIQUE_VIOLATION = '23505';

/**
 * The secrets rotated out whose grace lasts, newest first, as text[]; null when there is none (read
 * at no cost for an endpoint never rotated). Each `until` is Unix ms by PostgreSQL's clock, the one
 * that stamped it.
 */
const livePreviousSecrets = (column: string) => `CASE WHEN ${column} IS NOT NULL THEN
  nullif(ARRAY(SELECT p ->> 0 FROM jsonb_array_elements(${column}) WITH ORDINALITY AS x (p, n)
               WHERE (p ->> 1)::float8 > extract(epoch FROM now())::float8 * 1000 ORDER BY n), '{}') END`;

const sql = {
  // The counts race with a concurrent registration: a cap may be passed by as many as register at once.
  // An endpoint of the owner that has the URL already: nothing is inserted (the unique index, which
  // also settles two replicas registering the same URL at once).
  createEndpoint: `INSERT INTO webhook_endpoints (id, url, description, secret, event_types, payload_format, rate_limit,
                                                  created_at, owner)
                   SELECT $1, $2, $3, $4, $5, $6, $7, now(), $8
                   WHERE (SELECT count(*) FROM webhook_endpoints WHERE owner = $8) < $9
                     AND (SELECT count(*) FROM webhook_endpoints) < $10
                   ON CONFLICT DO NOTHING
                   RETURNING created_at`,
  ownedCount: 'SELECT count(*)::int AS count FROM webhook_endpoints WHERE owner = $1',
  urlHolder: 'SELECT id FROM webhook_endpoints WHERE owner = $1 AND url = $2 AND NOT duplicate_url',
  // The holder among the endpoints of the owner of the endpoint $1.
  urlHolderBeside: `SELECT id FROM webhook_endpoints
                    WHERE owner = (SELECT owner FROM webhook_endpoints WHERE id = $1) AND url = $2 AND NOT duplicate_url`,
  // Enabling a disabled endpoint forgets why it was disabled and its failing streak, so that its
  // pending deliveries are claimed again and auto-disable counts afresh. The right-hand sides read
  // the row as it was.
  updateEndpoint: `UPDATE webhook_endpoints SET
                     url = coalesce($2, url),
                     duplicate_url = CASE WHEN $2::text IS NULL THEN duplicate_url ELSE false END,
                     description = CASE WHEN $3::boolean THEN $4 ELSE description END,
                     enabled = coalesce($5, enabled),
                     event_types = coalesce($6, event_types),
                     payload_format = coalesce($7, payload_format),
                     rate_limit = CASE WHEN $8::boolean THEN $9::int ELSE rate_limit END,
                     -- What was sent within the burst counts at the new rate, at most a burst (rescaledTat in rate-limit.ts).
                     rate_tat = CASE
                       WHEN NOT $8::boolean THEN rate_tat
                       WHEN $9::int IS NULL OR rate_limit IS NULL OR rate_tat IS NULL OR rate_tat <= now() THEN NULL
                       ELSE now() + least(interval '1 second', (rate_tat - now()) * (rate_limit::float8 / $9::int)) END,
                     disabled_reason = CASE
                       WHEN $5::boolean THEN NULL
                       WHEN NOT $5::boolean AND enabled THEN '${DISABLED_BY_REQUEST}'
                       ELSE disabled_reason END,
                     failing_since = CASE WHEN $5::boolean AND NOT enabled THEN NULL ELSE failing_since END
                   WHERE id = $1
                   RETURNING ${ENDPOINT_COLUMNS}`,
  // The current secret, then those rotated out before whose grace lasts, $4 at most; the right-hand
  // sides read the row as it was.
  rotateSecret: `UPDATE webhook_endpoints SET secret = $2, previous_secrets = (
                   SELECT jsonb_agg(p ORDER BY n) FROM (
                     SELECT p, n FROM (
                       SELECT jsonb_build_array(secret, extract(epoch FROM now())::float8 * 1000 + $3::float8) AS p,
                              0::bigint AS n
                       UNION ALL
                       SELECT p, n FROM jsonb_array_elements(coalesce(previous_secrets, '[]')) WITH ORDINALITY AS x (p, n)
                       WHERE (p ->> 1)::float8 > extract(epoch FROM now())::float8 * 1000
                     ) kept ORDER BY n LIMIT $4
                   ) newest)
                 WHERE id = $1`,
  requeueFailed: `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), finished_at = NULL
                  WHERE seq IN (
                    SELECT seq FROM webhook_deliveries
                    WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2
                    ORDER BY created_at LIMIT $3
                  ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND enabled)`,
  // Leased deliveries are due at their lease's end: the lease keeps them out.
  expediteRetries: `UPDATE webhook_deliveries SET next_attempt_at = now()
                    WHERE seq IN (
                      SELECT seq FROM webhook_deliveries
                      WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at > now() AND attempts >= 2
                        AND (lease_until IS NULL OR lease_until <= now())
                      ORDER BY next_attempt_at LIMIT $2
                    )`,
  retryDelivery: `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), delivered_at = NULL,
                    finished_at = NULL
                  WHERE seq = $2 AND endpoint_id = $1
                    AND (SELECT instance FROM webhook_settings) = $3
                    AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND enabled)`,
  endpointSecrets: `SELECT id, secret,
                            ARRAY(SELECT jsonb_array_elements(coalesce(previous_secrets, '[]')) ->> 0) AS previous_secrets
                     FROM webhook_endpoints ORDER BY id`,
  signingSecrets: `SELECT secret, ${livePreviousSecrets('previous_secrets')} AS previous_secrets
                   FROM webhook_endpoints WHERE id = $1`,
  replaceSecret: 'UPDATE webhook_endpoints SET secret = $3 WHERE id = $1 AND secret = $2',
  // A secret is one JSON string of the array, written as to_jsonb writes it.
  replacePreviousSecret: `UPDATE webhook_endpoints
                          SET previous_secrets = replace(previous_secrets::text, to_jsonb($2::text)::text,
                                                         to_jsonb($3::text)::text)::jsonb
                          WHERE id = $1 AND strpos(previous_secrets::text, to_jsonb($2::text)::text) > 0`,
  listEndpoints: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
  listOwnedEndpoints: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE owner = $1 ORDER BY created_at, id`,
  getEndpoint: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
  // Disabled first, so that no create announces to it while its deliveries go in batches; the
  // few announced by creates that began before are deleted with it (ON DELETE CASCADE).
  disableForDeletion: 'UPDATE webhook_endpoints SET enabled = false WHERE id = $1',
  deleteDeliveries: `DELETE FROM webhook_deliveries WHERE seq IN (
                       SELECT seq FROM webhook_deliveries WHERE endpoint_id = $1 LIMIT $2
                     )`,
  deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = $1',
  listDeliveries: `SELECT 'msg_' || s.instance || '_' || d.seq AS id, d.endpoint_id, d.type, d.plant_id, d.status, d.attempts,
                          d.last_status, d.last_error, d.next_attempt_at, d.delivered_at, d.created_at
                   FROM webhook_deliveries d CROSS JOIN webhook_settings s
                   WHERE d.endpoint_id = $1 AND d.seq < $3 ORDER BY d.seq DESC LIMIT $2`,
  // Takes turns across endpoints: each enabled endpoint's due deliveries in order, up to its room
  // (as listed in $5/$6, else $4), ranked so that every endpoint's first
  // comes before any endpoint's second. SKIP LOCKED: replicas claiming at once each take different
  // rows instead of queueing behind one another. A row another replica claimed and committed is no
  // longer due (the lease moved next_attempt_at to its end), and READ COMMITTED re-checks that
  // condition on the newest version of a row it locks. A replica that dies holding a lease holds
  // nothing once the lease ends: the delivery is due again and its peers take it over.
  //
  // Rate limits (store/rate-limit.ts, in SQL): the rows of the rate-limited endpoints are locked, so
  // that the TAT read is the newest and advanced by this statement alone; one another replica's claim
  // holds is skipped (room 0 this time: that claim takes its share), so claims never wait for each
  // other, and endpoints without a limit lock nothing. NO KEY UPDATE: the key-share locks a fan-out's
  // inserted deliveries take on their endpoints do not conflict with it. One row, all null but
  // room_ms, reports in how many ms the first rate-limited endpoint left short of room has room for
  // a tenth of a second's worth (at least one) again.
  claimDue: `WITH limited AS (
               SELECT id, rate_limit AS rate, greatest(coalesce(rate_tat, now()), now()) AS tat
               FROM webhook_endpoints WHERE enabled AND rate_limit IS NOT NULL
               FOR NO KEY UPDATE SKIP LOCKED
             ), room AS (
               SELECT e.id, CASE
                        WHEN e.rate_limit IS NULL THEN coalesce(b.n, $4::int)
                        WHEN l.id IS NULL THEN 0
                        ELSE least(coalesce(b.n, $4::int),
                                   floor(extract(epoch FROM now() + interval '1 second' - l.tat) * l.rate + 1e-6)::int)
                      END AS room
               FROM webhook_endpoints e LEFT JOIN unnest($5::text[], $6::int[]) AS b (id, n) ON b.id = e.id
                 LEFT JOIN limited l ON l.id = e.id
               WHERE e.enabled
             ), due AS (
               SELECT d.seq, d.next_attempt_at,
                      row_number() OVER (PARTITION BY r.id ORDER BY d.next_attempt_at) AS turn
               FROM room r CROSS JOIN LATERAL (
                 SELECT seq, next_attempt_at FROM webhook_deliveries
                 WHERE endpoint_id = r.id AND status = 'pending' AND next_attempt_at <= now()
                 ORDER BY next_attempt_at
                 LIMIT greatest(least(r.room, $1), 0)
                 FOR UPDATE SKIP LOCKED
               ) d
             ), chosen AS (
               SELECT seq FROM due ORDER BY turn, next_attempt_at LIMIT $1
             ), claimed AS (
               UPDATE webhook_deliveries d
               SET lease_until = now() + $2::float8 * interval '1 millisecond',
                   next_attempt_at = now() + $2::float8 * interval '1 millisecond', lease_token = $3
               FROM chosen WHERE d.seq = chosen.seq
               RETURNING d.seq, d.endpoint_id, d.type, d.plant_id, d.data, d.attempts, d.created_at, d.traceparent
             ), rated AS (
               SELECT l.id, l.rate, l.tat + count(c.seq) * (1000.0 / l.rate) * interval '1 millisecond' AS tat,
                      count(c.seq) AS claimed
               FROM limited l LEFT JOIN claimed c ON c.endpoint_id = l.id
               GROUP BY l.id, l.rate, l.tat
             ), advanced AS (
               UPDATE webhook_endpoints e SET rate_tat = r.tat FROM rated r WHERE e.id = r.id AND r.claimed > 0
             )
             SELECT 'msg_' || s.instance || '_' || c.seq AS id, c.seq, c.endpoint_id, e.url, e.secret,
                    ${livePreviousSecrets('e.previous_secrets')} AS previous_secrets,
                    c.type, e.payload_format, c.plant_id, c.data, c.attempts, c.created_at, c.traceparent,
                    NULL::float8 AS room_ms
             FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id CROSS JOIN webhook_settings s
             UNION ALL
             SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                    extract(epoch FROM min(wake) - now())::float8 * 1000
             FROM (SELECT r.tat + greatest(1, ceil(r.rate / 10.0)) * (1000.0 / r.rate) * interval '1 millisecond'
                            - interval '1 second' AS wake
                   FROM rated r) w
             WHERE wake > now()
             HAVING count(*) > 0`,
  // Many attempts in one statement, each only while its lease holds. An endpoint's failing streak
  // is written only when it starts or ends (a delivered attempt among the batch ends it), not at
  // every attempt: one row every replica would otherwise update all the time.
  recordAttempts: `WITH input AS (
                     SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::int[], $5::text[], $6::float8[])
                       AS t (seq, token, outcome, status, error, retry_ms)
                   ), recorded AS (
                     UPDATE webhook_deliveries d SET
                       status = CASE i.outcome WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'failed' END,
                       attempts = d.attempts + 1, last_status = i.status, last_error = i.error,
                       next_attempt_at = CASE WHEN i.outcome = 'retry' THEN now() + i.retry_ms * interval '1 millisecond' END,
                       delivered_at = CASE WHEN i.outcome = 'delivered' THEN now() END,
                       finished_at = CASE WHEN i.outcome <> 'retry' THEN now() END,
                       lease_until = NULL, lease_token = NULL
                     FROM input i
                     WHERE d.seq = i.seq AND d.lease_token = i.token AND d.status = 'pending'
                     RETURNING d.seq, d.endpoint_id, i.outcome
                   ), streak AS (
                     UPDATE webhook_endpoints e SET failing_since = CASE WHEN r.delivered THEN NULL ELSE now() END
                     FROM (SELECT endpoint_id, bool_or(outcome = 'delivered') AS delivered FROM recorded GROUP BY endpoint_id) r
                     WHERE e.id = r.endpoint_id AND (e.failing_since IS NULL) = NOT r.delivered
                   )
                   SELECT seq FROM recorded`,
  disableEndpoint: `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2
                    WHERE id = $1 AND enabled AND ($3::timestamptz IS NULL OR failing_since <= $3)`,
  // SKIP LOCKED: replicas pruning at once delete different rows instead of waiting for each other.
  pruneFinished: `DELETE FROM webhook_deliveries WHERE seq IN (
                    SELECT seq FROM webhook_deliveries WHERE finished_at < $1 ORDER BY finished_at LIMIT $2
                    FOR UPDATE SKIP LOCKED
                  )`,
  // A disabled endpoint's pending deliveries wait for it to be enabled again: not a backlog.
  // The oldest events up to $1 (any when null), at most $2 of them and $3 delivery rows, each event
  // to every enabled endpoint registered by then that receives its type. SKIP LOCKED: replicas fanning out at once take
  // different events.
  fanOut: `WITH batch AS (
             DELETE FROM webhook_events WHERE seq IN (
               SELECT seq FROM webhook_events WHERE $1::int8 IS NULL OR seq <= $1 ORDER BY seq
               LIMIT greatest(1, least($2::int, $3::int / greatest(1, (SELECT count(*) FROM webhook_endpoints WHERE enabled))::int))
               FOR UPDATE SKIP LOCKED
             )
             RETURNING seq, type, plant_id, data, created_at, traceparent
           ), fanned AS (
             INSERT INTO webhook_deliveries (endpoint_id, type, plant_id, data, next_attempt_at, created_at, traceparent)
             SELECT ep.id, b.type, b.plant_id, b.data, b.created_at, b.created_at, b.traceparent
             FROM batch b JOIN webhook_endpoints ep ON ep.enabled AND ep.created_at <= b.created_at
               AND b.type = ANY (string_to_array(ep.event_types, ','))
             ORDER BY b.seq, ep.created_at, ep.id
           )
           SELECT count(*) AS events FROM batch`,
  // Nothing to fan out or claim without an enabled endpoint and without an event waiting (events
  // announced before every endpoint was disabled are still fanned out, as before). No parameters:
  // its plan cannot depend on them.
  anyWork: `SELECT EXISTS (SELECT FROM webhook_endpoints WHERE enabled) OR EXISTS (SELECT FROM webhook_events) AS work`,
  lastEvent: 'SELECT max(seq) AS seq FROM webhook_events',
  eventBacklog: `SELECT (SELECT count(*) FROM webhook_events) * (SELECT count(*) FROM webhook_endpoints WHERE enabled) AS pending,
                        (SELECT created_at FROM webhook_events ORDER BY seq LIMIT 1) AS oldest`,
  backlog: `SELECT count(*) AS pending, min(d.created_at) AS oldest
            FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE d.status = 'pending' AND e.enabled`,
  // The same rows by endpoint, and the events still to be fanned out: each is pending for every
  // enabled endpoint registered by then (see fanOut), the first of them its oldest.
  backlogByEndpoint: `SELECT id, min(oldest) AS oldest FROM (
                        SELECT d.endpoint_id AS id, min(d.created_at) AS oldest
                        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                        WHERE d.status = 'pending' AND e.enabled
                        GROUP BY d.endpoint_id
                        UNION ALL
                        SELECT e.id, (SELECT ev.created_at FROM webhook_events ev
                                      WHERE ev.created_at >= e.created_at ORDER BY ev.seq LIMIT 1)
                        FROM webhook_endpoints e WHERE e.enabled
                      ) pending WHERE oldest IS NOT NULL GROUP BY id ORDER BY oldest, id LIMIT $1`,
};

type Run = <T>(operation: () => Promise<T>) => Promise<T>;

/** The webhook side of PostgresPlantStore, on its pool (its statements within their deadline); `run` tracks each operation for close and maps outages to 503. */
export class PostgresWebhookStore implements WebhookStore {
  readonly #pool: DeadlinePool;
  readonly #run: Run;
  readonly #announced = new AnnounceListeners();
  /** The last claim found nothing due. */
  #idle = false;

  constructor(pool: DeadlinePool, run: Run) {
    this.#pool = pool;
    this.#run = run;
  }

  createEndpoint(endpoint: NewStoredEndpoint, { perOwner, total }: EndpointCaps): Promise<CreateEndpointOutcome> {
    return this.#run(async () => {
      const registered = registration(endpoint);
      const { id, url, description, eventTypes, payloadFormat, rateLimit, owner } = registered;
      const values = [
        id,
        url,
        description ?? null,
        endpoint.secret,
        storedEventTypes(eventTypes),
        payloadFormat,
        rateLimit ?? null,
        owner,
        perOwner,
        total,
      ];
      const { rows } = await this.#pool.query<{ created_at: Date }>(sql.createEndpoint, values);
      if (rows[0]) {
        return registeredEndpoint(
          { id, url, description, eventTypes, payloadFormat, rateLimit, owner },
          rows[0].created_at,
        );
      }
      const [holder] = (await this.#pool.query<{ id: string }>(sql.urlHolder, [owner, url])).rows;
      if (holder !== undefined) return { outcome: 'url-taken', holder: holder.id };
      const [owned] = (await this.#pool.query<{ count: number }>(sql.ownedCount, [owner])).rows;
      return (owned?.count ?? 0) >= perOwner ? { outcome: 'too-many' } : { outcome: 'too-many-in-all' };
    });
  }

  updateEndpoint(
    id: string,
    { url, description, enabled, eventTypes, payloadFormat, rateLimit }: EndpointChanges,
  ): Promise<UpdateEndpointOutcome> {
    return this.#run(async () => {
      try {
        const types = eventTypes === undefined ? null : storedEventTypes(eventTypes);
        const values = [
          id,
          url ?? null,
          description !== undefined,
          description ?? null,
          enabled ?? null,
          types,
          payloadFormat ?? null,
          rateLimit !== undefined,
          rateLimit ?? null,
        ];
        const update = (db: Queryable) => db.query<EndpointRow>(sql.updateEndpoint, values);
        const { rows } = await (types === null
          ? update(this.#pool)
          : this.#pool.transaction((tx) => this.#retype(tx, update)));
        return rows[0] ? { outcome: 'updated', endpoint: toEndpoint(rows[0]) } : { outcome: 'not-found' };
      } catch (error) {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION || url === undefined) throw error;
        const [holder] = (await this.#pool.query<{ id: string }>(sql.urlHolderBeside, [id, url])).rows;
        // Deleted since: the URL is free now, and this update may be sent again.
        if (holder === undefined) throw error;
        return { outcome: 'url-taken', holder: holder.id };
      }
    });
  }

  /**
   * Changes an endpoint's event types (`update`, in transaction `tx`) so that the events announced
   * before the change go out by the types they were announced under, and those announced after by
   * the new ones, however many replicas create and delete meanwhile. The lock waits for the create,
   * delete and fan-out statements in flight (each writes webhook_events) and holds new ones back
   * until the change commits; one held back takes its snapshot once it has the lock (READ
   * COMMITTED), so it reads the new receivers of each type. With no other writer of events, everything
   * announced is fanned out under the old types, then the types change. SHARE ROW EXCLUSIVE, not
   * SHARE, because it conflicts with itself: two changes at once take turns instead of deadlocking
   * on the fan-out's writes.
   */
  async #retype<T>(tx: Queryable, update: (db: Queryable) => Promise<T>): Promise<T> {
    await tx.query('LOCK TABLE webhook_events IN SHARE ROW EXCLUSIVE MODE');
    while ((await this.#fanOut(null, Number.MAX_SAFE_INTEGER, tx)) > 0);
    return update(tx);
  }

  rotateSecret(id: string, secret: string, graceMs: number): Promise<boolean> {
    return this.#run(
      async () =>
        (await this.#pool.query(sql.rotateSecret, [id, secret, graceMs, WEBHOOK_PREVIOUS_SECRETS_MAX])).rowCount === 1,
    );
  }

  requeueFailed(endpointId: string, since: Date, limit: number): Promise<number> {
    return this.#count(sql.requeueFailed, [endpointId, since, limit]);
  }

  expediteRetries(endpointId: string, limit: number): Promise<number> {
    return this.#count(sql.expediteRetries, [endpointId, limit]);
  }

  retryDelivery(endpointId: string, deliveryId: string): Promise<boolean> {
    const parsed = parseDeliveryId(deliveryId);
    if (parsed === undefined) return Promise.resolve(false);
    return this.#run(
      async () =>
        (await this.#pool.query(sql.retryDelivery, [endpointId, parsed.seq.toString(), parsed.instance])).rowCount ===
        1,
    );
  }

  endpointSecrets(): Promise<EndpointSecrets[]> {
    return this.#run(async () => {
      type Row = { id: string; secret: string; previous_secrets: string[] };
      const { rows } = await this.#pool.query<Row>(sql.endpointSecrets);
      return rows.map(({ id, secret, previous_secrets }) => ({ id, secret, previousSecrets: previous_secrets }));
    });
  }

  signingSecrets(id: string): Promise<SigningSecrets | undefined> {
    return this.#run(async () => {
      type Row = { secret: string; previous_secrets: string[] | null };
      const [row] = (await this.#pool.query<Row>(sql.signingSecrets, [id])).rows;
      if (row === undefined) return undefined;
      return row.previous_secrets === null
        ? { secret: row.secret }
        : { secret: row.secret, previousSecrets: row.previous_secrets };
    });
  }

  replaceSecret(id: string, which: 'secret' | 'previousSecret', from: string, to: string): Promise<boolean> {
    const statement = which === 'secret' ? sql.replaceSecret : sql.replacePreviousSecret;
    return this.#run(async () => (await this.#pool.query(statement, [id, from, to])).rowCount === 1);
  }

  #count(statement: string, values: unknown[]): Promise<number> {
    return this.#run(async () => (await this.#pool.query(statement, values)).rowCount ?? 0);
  }

  listEndpoints(owner?: string): Promise<StoredEndpoint[]> {
    return this.#run(async () => {
      const { rows } =
        owner === undefined
          ? await this.#pool.query<EndpointRow>(sql.listEndpoints)
          : await this.#pool.query<EndpointRow>(sql.listOwnedEndpoints, [owner]);
      return rows.map(toEndpoint);
    });
  }

  getEndpoint(id: string): Promise<StoredEndpoint | undefined> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<EndpointRow>(sql.getEndpoint, [id]);
      return rows[0] && toEndpoint(rows[0]);
    });
  }

  deleteEndpoint(id: string): Promise<boolean> {
    return this.#run(async () => {
      if ((await this.#pool.query(sql.disableForDeletion, [id])).rowCount === 0) return false;
      // In batches, each its own statement: none holds the table or the statement timeout for long.
      while ((await this.#pool.query(sql.deleteDeliveries, [id, DELETE_BATCH])).rowCount === DELETE_BATCH);
      return (await this.#pool.query(sql.deleteEndpoint, [id])).rowCount === 1;
    });
  }

  listDeliveries(endpointId: string, limit: number, before = LAST_SEQ): Promise<StoredDelivery[] | undefined> {
    return this.#run(async () => {
      // Listing answers every announcement made before it.
      await this.#fanOutAnnounced();
      const [endpoint, deliveries] = await Promise.all([
        this.#pool.query(sql.getEndpoint, [endpointId]),
        this.#pool.query<DeliveryRow>(sql.listDeliveries, [endpointId, limit, String(before)]),
      ]);
      return endpoint.rowCount === 0 ? undefined : deliveries.rows.map(toDelivery);
    });
  }

  claimDue({ limit, leaseMs, perEndpoint, room, onRateLimited }: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.#run(async () => {
      // The fan-out and the claim are parsed and planned at every call, and the delivery loop
      // calls every 20 ms while the machine is busy, webhooks in use or not. After a claim that
      // found nothing, a small named statement says first whether there can be anything to do.
      if (this.#idle) {
        const { rows } = await this.#pool.query<{ work: boolean }>({ name: 'webhooks-any-work', text: sql.anyWork });
        if (!rows[0]?.work) return [];
      }
      // A few times what is claimed, so that fanning out keeps ahead of delivering.
      await this.#fanOut(null, FAN_OUT_PER_CLAIMED * limit);
      const token = randomUUID();
      const { rows } = await this.#pool.query<ClaimedRow>(sql.claimDue, [
        limit,
        leaseMs,
        token,
        perEndpoint,
        [...room.keys()],
        [...room.values()],
      ]);
      this.#idle = rows.length === 0;
      const report = rows.findIndex((row) => row.room_ms !== null);
      if (report !== -1) {
        onRateLimited?.(rows[report]?.room_ms ?? 0);
        rows.splice(report, 1);
      }
      return rows.map((row) => {
        // The optional fields are set last, not spread into the literal: every property after a
        // spread is defined through a slow runtime call, once per delivery (as in sqlite-store.ts).
        const claimed: ClaimedDelivery = {
          id: row.id,
          seq: row.seq,
          endpointId: row.endpoint_id,
          url: row.url,
          secret: row.secret,
          type: row.type,
          payloadFormat: row.payload_format,
          plantId: row.plant_id,
          data: row.data,
          attempts: row.attempts,
          leaseToken: token,
          createdAt: row.created_at,
        };
        if (row.previous_secrets !== null) claimed.previousSecrets = row.previous_secrets;
        if (row.traceparent !== null) claimed.traceparent = row.traceparent;
        return claimed;
      });
    });
  }

  async recordAttempt(claim: ClaimedDelivery, result: AttemptResult): Promise<boolean> {
    return (await this.recordAttempts([{ claim, result }]))[0] === true;
  }

  recordAttempts(attempts: readonly RecordedAttempt[]): Promise<boolean[]> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<{ seq: bigint }>(sql.recordAttempts, [
        attempts.map(({ claim }) => claim.seq.toString()),
        attempts.map(({ claim }) => claim.leaseToken),
        attempts.map(({ result }) => result.outcome),
        attempts.map(({ result }) => ('status' in result && result.status !== undefined ? result.status : null)),
        attempts.map(({ result }) => ('error' in result ? result.error : null)),
        attempts.map(({ result }) => (result.outcome === 'retry' ? result.retryInMs : null)),
      ]);
      const held = new Set(rows.map((row) => row.seq));
      return attempts.map(({ claim }) => held.has(claim.seq));
    });
  }

  disableEndpoint(id: string, reason: string, failingSince?: Date): Promise<boolean> {
    return this.#run(
      async () => (await this.#pool.query(sql.disableEndpoint, [id, reason, failingSince ?? null])).rowCount === 1,
    );
  }

  pruneFinished(before: Date, limit: number): Promise<number> {
    return this.#run(async () => (await this.#pool.query(sql.pruneFinished, [before, limit])).rowCount ?? 0);
  }

  onAnnounce(listener: () => void): () => void {
    return this.#announced.add(listener);
  }

  /** Tells this process's delivery loop that plants were announced (PostgresPlantStore calls it after creates). */
  announced(): void {
    this.#announced.notify();
  }

  backlogByEndpoint(limit: number): Promise<EndpointBacklog[]> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<{ id: string; oldest: Date }>(sql.backlogByEndpoint, [limit]);
      return rows.map(({ id, oldest }) => ({ endpointId: id, oldestPendingAt: oldest }));
    });
  }

  backlog(): Promise<WebhookBacklog> {
    return this.#run(async () => {
      type Backlog = { pending: bigint; oldest: Date | null };
      const [deliveries, events] = await Promise.all([
        this.#pool.query<Backlog>(sql.backlog),
        this.#pool.query<Backlog>(sql.eventBacklog),
      ]);
      const pending = Number(deliveries.rows[0]?.pending ?? 0) + Number(events.rows[0]?.pending ?? 0);
      const oldest = [
        deliveries.rows[0]?.oldest,
        Number(events.rows[0]?.pending ?? 0) > 0 ? events.rows[0]?.oldest : null,
      ]
        .filter((date): date is Date => date instanceof Date)
        .sort((a, b) => a.getTime() - b.getTime())[0];
      return { pending, oldestPendingAt: oldest };
    });
  }

  /** Fans out every event announced so far, in bounded statements. */
  async #fanOutAnnounced(): Promise<void> {
    const { rows } = await this.#pool.query<{ seq: bigint | null }>(sql.lastEvent);
    const last = rows[0]?.seq ?? null;
    if (last !== null) while ((await this.#fanOut(last, Number.MAX_SAFE_INTEGER)) > 0);
  }

  /**
   * Fans out a batch of events up to `last` (any when null), at most `events` of them and never
   * more than FAN_OUT_ROWS deliveries; resolves with how many events it took.
   */
  async #fanOut(last: bigint | null, events: number, db: Queryable = this.#pool): Promise<number> {
    const { rows } = await db.query<{ events: bigint }>(sql.fanOut, [
      last === null ? null : last.toString(),
      Math.min(events, 2 ** 31 - 1),
      FAN_OUT_ROWS,
    ]);
    return Number(rows[0]?.events ?? 0);
  }
}
