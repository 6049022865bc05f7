import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  type AttemptResult,
  type ClaimedDelivery,
  type ClaimOptions,
  type CreateEndpointOutcome,
  type DeliveryStatus,
  type EndpointChanges,
  type EndpointSecrets,
  type NewStoredEndpoint,
  parseDeliveryId,
  STOPPED_BY_DISABLING,
  STOPPED_BY_GONE,
  type StoredDelivery,
  type StoredEndpoint,
  type UpdateEndpointOutcome,
  type WebhookBacklog,
  type WebhookStore,
} from './webhook-store.ts';

type EndpointRow = { id: string; url: string; description: string | null; enabled: boolean; created_at: Date };
type DeliveryRow = {
  id: string;
  endpoint_id: string;
  plant_id: bigint;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
};
type ClaimedRow = {
  id: string;
  seq: bigint;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  plant_id: bigint;
  name: string;
  tag: string | null;
  attempts: number;
  created_at: Date;
};

const toEndpoint = (row: EndpointRow): StoredEndpoint => ({
  id: row.id,
  url: row.url,
  ...(row.description !== null && { description: row.description }),
  enabled: row.enabled,
  createdAt: row.created_at,
});

const toDelivery = (row: DeliveryRow): StoredDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  plantId: row.plant_id,
  status: row.status,
  attempts: row.attempts,
  ...(row.last_status !== null && { lastStatus: row.last_status }),
  ...(row.last_error !== null && { lastError: row.last_error }),
  ...(row.next_attempt_at !== null && { nextAttemptAt: row.next_attempt_at }),
  ...(row.delivered_at !== null && { deliveredAt: row.delivered_at }),
  createdAt: row.created_at,
});

/** unique_violation: here, the unique URL index. */
const UNIQUE_VIOLATION = '23505';
const ENDPOINT_COLUMNS = 'id, url, description, enabled, created_at';

const sql = {
  // The count races with a concurrent registration: the cap may be passed by as many as register at once.
  // An endpoint that has the URL already: nothing is inserted (the unique index, which also settles
  // two replicas registering the same URL at once).
  createEndpoint: `INSERT INTO webhook_endpoints (id, url, description, secret, created_at)
                   SELECT $1, $2, $3, $4, $5 WHERE (SELECT count(*) FROM webhook_endpoints) < $6
                   ON CONFLICT DO NOTHING`,
  urlHolder: 'SELECT id FROM webhook_endpoints WHERE url = $1 AND NOT duplicate_url',
  updateEndpoint: `UPDATE webhook_endpoints SET
                     url = coalesce($2, url),
                     duplicate_url = CASE WHEN $2::text IS NULL THEN duplicate_url ELSE false END,
                     description = CASE WHEN $3::boolean THEN $4 ELSE description END,
                     enabled = coalesce($5, enabled)
                   WHERE id = $1
                   RETURNING ${ENDPOINT_COLUMNS}`,
  stopPending: `UPDATE webhook_deliveries SET status = 'failed', last_error = '${STOPPED_BY_DISABLING}', next_attempt_at = NULL
                WHERE seq IN (
                  -- An attempt in flight ends as it will; its outcome is recorded.
                  SELECT seq FROM webhook_deliveries
                  WHERE endpoint_id = $1 AND status = 'pending' AND (lease_until IS NULL OR lease_until <= now())
                  LIMIT $2
                ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND NOT enabled)`,
  resumeStopped: `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now()
                  WHERE seq IN (
                    SELECT seq FROM webhook_deliveries
                    WHERE endpoint_id = $1 AND status = 'failed'
                      AND (last_error IN ('${STOPPED_BY_GONE}', '${STOPPED_BY_DISABLING}') OR last_status = 410)
                    LIMIT $2
                  ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND enabled)`,
  rotateSecret: `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $3, secret = $2
                 WHERE id = $1`,
  requeueFailed: `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now()
                  WHERE seq IN (
                    SELECT seq FROM webhook_deliveries
                    WHERE endpoint_id = $1 AND status = 'failed' AND created_at >= $2
                    ORDER BY created_at LIMIT $3
                  ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND enabled)`,
  retryDelivery: `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = now(), delivered_at = NULL
                  WHERE seq = $2 AND endpoint_id = $1
                    AND (SELECT instance FROM webhook_settings) = $3
                    AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = $1 AND enabled)`,
  endpointSecrets: 'SELECT id, secret, previous_secret FROM webhook_endpoints ORDER BY id',
  replaceSecret: 'UPDATE webhook_endpoints SET secret = $3 WHERE id = $1 AND secret = $2',
  replacePreviousSecret: 'UPDATE webhook_endpoints SET previous_secret = $3 WHERE id = $1 AND previous_secret = $2',
  listEndpoints: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
  getEndpoint: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
  // Its deliveries go with it (ON DELETE CASCADE).
  deleteEndpoint: 'DELETE FROM webhook_endpoints WHERE id = $1',
  listDeliveries: `SELECT 'msg_' || s.instance || '_' || d.seq AS id, d.endpoint_id, d.plant_id, d.status, d.attempts,
                          d.last_status, d.last_error, d.next_attempt_at, d.delivered_at, d.created_at
                   FROM webhook_deliveries d CROSS JOIN webhook_settings s
                   WHERE d.endpoint_id = $1 ORDER BY d.seq DESC LIMIT $2`,
  // SKIP LOCKED: replicas claiming at once each take different rows instead of queueing behind one
  // another. A row another replica claimed and committed is no longer due (its lease runs), and
  // READ COMMITTED re-checks that condition on the newest version of a row it locks. A replica that
  // dies holding a lease holds nothing once lease_until passes: its peers take the delivery over.
  claimDue: `WITH due AS (
               SELECT seq FROM webhook_deliveries
               WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until <= now())
               ORDER BY next_attempt_at
               LIMIT $1
               FOR UPDATE SKIP LOCKED
             ), claimed AS (
               UPDATE webhook_deliveries d
               SET lease_until = now() + $2::float8 * interval '1 millisecond', lease_token = $3
               FROM due WHERE d.seq = due.seq
               RETURNING d.seq, d.endpoint_id, d.plant_id, d.name, d.tag, d.attempts, d.created_at
             )
             SELECT 'msg_' || s.instance || '_' || c.seq AS id, c.seq, c.endpoint_id, e.url, e.secret,
                    CASE WHEN e.previous_secret_until > now() THEN e.previous_secret END AS previous_secret,
                    c.plant_id, c.name, c.tag, c.attempts, c.created_at
             FROM claimed c JOIN webhook_endpoints e ON e.id = c.endpoint_id CROSS JOIN webhook_settings s`,
  // Only while the lease holds. On 410 Gone the same statement disables the endpoint and fails its
  // other pending deliveries.
  recordAttempt: `WITH recorded AS (
                    UPDATE webhook_deliveries SET
                      status = CASE $3::text WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'failed' END,
                      attempts = attempts + 1, last_status = $4, last_error = $5,
                      next_attempt_at = CASE WHEN $3::text = 'retry' THEN now() + $6::float8 * interval '1 millisecond' END,
                      delivered_at = CASE WHEN $3::text = 'delivered' THEN now() END,
                      lease_until = NULL, lease_token = NULL
                    WHERE seq = $1 AND lease_token = $2 AND status = 'pending'
                    RETURNING endpoint_id
                  ), disabled AS (
                    UPDATE webhook_endpoints SET enabled = false
                    WHERE $3::text = 'gone' AND id IN (SELECT endpoint_id FROM recorded)
                    RETURNING id
                  ), failed AS (
                    UPDATE webhook_deliveries SET status = 'failed', last_error = '${STOPPED_BY_GONE}',
                      next_attempt_at = NULL, lease_until = NULL, lease_token = NULL
                    WHERE endpoint_id IN (SELECT id FROM disabled) AND status = 'pending' AND seq <> $1
                  )
                  SELECT count(*) AS held FROM recorded`,
  backlog: "SELECT count(*) AS pending, min(created_at) AS oldest FROM webhook_deliveries WHERE status = 'pending'",
};

type Run = <T>(operation: () => Promise<T>) => Promise<T>;

/** The webhook side of PostgresPlantStore, on its pool; `run` tracks each operation for close and maps outages to 503. */
export class PostgresWebhookStore implements WebhookStore {
  readonly #pool: pg.Pool;
  readonly #run: Run;

  constructor(pool: pg.Pool, run: Run) {
    this.#pool = pool;
    this.#run = run;
  }

  createEndpoint(endpoint: NewStoredEndpoint, max: number): Promise<CreateEndpointOutcome> {
    return this.#run(async () => {
      const { id, url, description, secret, createdAt } = endpoint;
      const values = [id, url, description ?? null, secret, createdAt, max];
      const { rowCount } = await this.#pool.query(sql.createEndpoint, values);
      if (rowCount === 1) {
        const created = { id, url, ...(description !== undefined && { description }), enabled: true, createdAt };
        return { outcome: 'created', endpoint: created };
      }
      const holder = await this.#urlHolder(url);
      return holder === undefined ? { outcome: 'too-many' } : { outcome: 'url-taken', holder };
    });
  }

  updateEndpoint(id: string, { url, description, enabled }: EndpointChanges): Promise<UpdateEndpointOutcome> {
    return this.#run(async () => {
      try {
        const values = [id, url ?? null, description !== undefined, description ?? null, enabled ?? null];
        const { rows } = await this.#pool.query<EndpointRow>(sql.updateEndpoint, values);
        return rows[0] ? { outcome: 'updated', endpoint: toEndpoint(rows[0]) } : { outcome: 'not-found' };
      } catch (error) {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION || url === undefined) throw error;
        const holder = await this.#urlHolder(url);
        // Deleted since: the URL is free now, and this update may be sent again.
        if (holder === undefined) throw error;
        return { outcome: 'url-taken', holder };
      }
    });
  }

  stopPending(endpointId: string, limit: number): Promise<number> {
    return this.#count(sql.stopPending, [endpointId, limit]);
  }

  resumeStopped(endpointId: string, limit: number): Promise<number> {
    return this.#count(sql.resumeStopped, [endpointId, limit]);
  }

  rotateSecret(id: string, secret: string, previousUntil: Date): Promise<boolean> {
    return this.#run(
      async () => (await this.#pool.query(sql.rotateSecret, [id, secret, previousUntil])).rowCount === 1,
    );
  }

  requeueFailed(endpointId: string, since: Date, limit: number): Promise<number> {
    return this.#count(sql.requeueFailed, [endpointId, since, limit]);
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
      type Row = { id: string; secret: string; previous_secret: string | null };
      const { rows } = await this.#pool.query<Row>(sql.endpointSecrets);
      return rows.map(({ id, secret, previous_secret }) =>
        previous_secret === null ? { id, secret } : { id, secret, previousSecret: previous_secret },
      );
    });
  }

  replaceSecret(id: string, which: 'secret' | 'previousSecret', from: string, to: string): Promise<boolean> {
    const statement = which === 'secret' ? sql.replaceSecret : sql.replacePreviousSecret;
    return this.#run(async () => (await this.#pool.query(statement, [id, from, to])).rowCount === 1);
  }

  async #urlHolder(url: string): Promise<string | undefined> {
    const { rows } = await this.#pool.query<{ id: string }>(sql.urlHolder, [url]);
    return rows[0]?.id;
  }

  #count(statement: string, values: unknown[]): Promise<number> {
    return this.#run(async () => (await this.#pool.query(statement, values)).rowCount ?? 0);
  }

  listEndpoints(): Promise<StoredEndpoint[]> {
    return this.#run(async () => (await this.#pool.query<EndpointRow>(sql.listEndpoints)).rows.map(toEndpoint));
  }

  getEndpoint(id: string): Promise<StoredEndpoint | undefined> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<EndpointRow>(sql.getEndpoint, [id]);
      return rows[0] && toEndpoint(rows[0]);
    });
  }

  deleteEndpoint(id: string): Promise<boolean> {
    return this.#run(async () => (await this.#pool.query(sql.deleteEndpoint, [id])).rowCount === 1);
  }

  listDeliveries(endpointId: string, limit: number): Promise<StoredDelivery[] | undefined> {
    return this.#run(async () => {
      const [endpoint, deliveries] = await Promise.all([
        this.#pool.query(sql.getEndpoint, [endpointId]),
        this.#pool.query<DeliveryRow>(sql.listDeliveries, [endpointId, limit]),
      ]);
      return endpoint.rowCount === 0 ? undefined : deliveries.rows.map(toDelivery);
    });
  }

  claimDue({ limit, leaseMs }: ClaimOptions): Promise<ClaimedDelivery[]> {
    return this.#run(async () => {
      const token = randomUUID();
      const { rows } = await this.#pool.query<ClaimedRow>(sql.claimDue, [limit, leaseMs, token]);
      return rows.map((row) => ({
        id: row.id,
        seq: row.seq,
        endpointId: row.endpoint_id,
        url: row.url,
        secret: row.secret,
        ...(row.previous_secret !== null && { previousSecret: row.previous_secret }),
        plant:
          row.tag === null ? { id: row.plant_id, name: row.name } : { id: row.plant_id, name: row.name, tag: row.tag },
        attempts: row.attempts,
        leaseToken: token,
        createdAt: row.created_at,
      }));
    });
  }

  recordAttempt(claim: ClaimedDelivery, result: AttemptResult): Promise<boolean> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<{ held: bigint }>(sql.recordAttempt, [
        claim.seq.toString(),
        claim.leaseToken,
        result.outcome,
        'status' in result && result.status !== undefined ? result.status : null,
        'error' in result ? result.error : null,
        result.outcome === 'retry' ? result.retryInMs : null,
      ]);
      return Number(rows[0]?.held ?? 0) === 1;
    });
  }

  backlog(): Promise<WebhookBacklog> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<{ pending: bigint; oldest: Date | null }>(sql.backlog);
      return { pending: Number(rows[0]?.pending ?? 0), oldestPendingAt: rows[0]?.oldest ?? undefined };
    });
  }
}
