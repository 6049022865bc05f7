import {
  type IdempotencyClaim,
  type IdempotencyKeyClaim,
  type KeptAnswer,
  PRUNED_PER_WRITE,
  type RequestStore,
  type TestWindowTake,
} from '../request-store.ts';
import type { Queryable } from './deadline-pool.ts';

/** SQL of the request store; SKIP LOCKED: replicas pruning at once delete different rows. */
const sql = {
  keysPrune: `DELETE FROM idempotency_keys WHERE key IN (
                SELECT key FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2
                FOR UPDATE SKIP LOCKED
              )`,
  keyExpire:
    'DELETE FROM idempotency_keys WHERE key = $1 AND (created_at < $2 OR (status IS NULL AND created_at < $3))',
  keyGet: 'SELECT fingerprint, status, body FROM idempotency_keys WHERE key = $1',
  keysLive:
    'SELECT count(*)::int AS live, min(created_at) AS oldest FROM idempotency_keys WHERE principal = $1 AND created_at >= $2',
  keyClaim: `INSERT INTO idempotency_keys (key, principal, fingerprint, created_at) VALUES ($1, $2, $3, $4)
             ON CONFLICT DO NOTHING`,
  keyFinish:
    'UPDATE idempotency_keys SET status = $3, body = $4 WHERE key = $1 AND fingerprint = $2 AND status IS NULL',
  keyRelease: 'DELETE FROM idempotency_keys WHERE key = $1 AND fingerprint = $2 AND status IS NULL',
  keptPlain: `SELECT key, body FROM idempotency_keys
              WHERE status IS NOT NULL AND left(body, 9) <> 'whenc_v1.' LIMIT $1`,
  keptReplace: 'UPDATE idempotency_keys SET body = $3 WHERE key = $1 AND body = $2',
  windowsPrune: `DELETE FROM webhook_test_windows WHERE key IN (
                   SELECT key FROM webhook_test_windows WHERE started_at <= $1 ORDER BY started_at LIMIT $2
                   FOR UPDATE SKIP LOCKED
                 )`,
  // One statement, so that replicas taking at once count every test: a window past its time opens
  // anew at this test; a window with room takes it; a full one is left as it is (no row returned).
  windowTake: `INSERT INTO webhook_test_windows AS w (key, started_at, tests) VALUES ($1, $2, 1)
               ON CONFLICT (key) DO UPDATE SET
                 started_at = CASE WHEN w.started_at <= $3 THEN excluded.started_at ELSE w.started_at END,
                 tests = CASE WHEN w.started_at <= $3 THEN 1 ELSE w.tests + 1 END
               WHERE w.started_at <= $3 OR w.tests < $4
               RETURNING started_at`,
  windowGet: 'SELECT started_at FROM webhook_test_windows WHERE key = $1',
};

type Run = <T>(operation: () => Promise<T>) => Promise<T>;

/** The RequestStore of PostgresPlantStore: `run` maps its failures as the store's others. */
export class PostgresRequestStore implements RequestStore {
  readonly #pool: Queryable;
  readonly #run: Run;

  constructor(pool: Queryable, run: Run) {
    this.#pool = pool;
    this.#run = run;
  }

  claimIdempotencyKey({
    key,
    principal,
    fingerprint,
    at,
    expiredBefore,
    staleBefore,
    maxPerPrincipal,
  }: IdempotencyKeyClaim): Promise<IdempotencyClaim> {
    return this.#run(async () => {
      await this.#pool.query(sql.keysPrune, [expiredBefore, PRUNED_PER_WRITE]);
      await this.#pool.query(sql.keyExpire, [key, expiredBefore, staleBefore]);
      const held = await this.#held(key, fingerprint);
      if (held !== undefined) return held;
      const { rows } = await this.#pool.query<{ live: number; oldest: Date | null }>(sql.keysLive, [
        principal,
        expiredBefore,
      ]);
      const { live = 0, oldest = null } = rows[0] ?? {};
      if (live >= maxPerPrincipal && oldest !== null) return { outcome: 'too-many', oldestAt: oldest };
      const claimed = await this.#pool.query(sql.keyClaim, [key, principal, fingerprint, at]);
      if (claimed.rowCount === 1) return { outcome: 'claimed' };
      // Claimed by another replica between the read and the insert; gone again: the holder gave it up.
      return (await this.#held(key, fingerprint)) ?? { outcome: 'running' };
    });
  }

  /** What the request finds when the key is held; undefined when it is not. */
  async #held(key: string, fingerprint: string): Promise<IdempotencyClaim | undefined> {
    const { rows } = await this.#pool.query<{ fingerprint: string; status: number | null; body: string | null }>(
      sql.keyGet,
      [key],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    if (row.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    if (row.status === null) return { outcome: 'running' };
    return { outcome: 'done', status: row.status, body: row.body ?? '' };
  }

  finishIdempotencyKey(key: string, fingerprint: string, status: number, body: string): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(sql.keyFinish, [key, fingerprint, status, body]);
    });
  }

  releaseIdempotencyKey(key: string, fingerprint: string): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query(sql.keyRelease, [key, fingerprint]);
    });
  }

  plainKeptAnswers(limit: number): Promise<KeptAnswer[]> {
    return this.#run(async () => (await this.#pool.query<KeptAnswer>(sql.keptPlain, [limit])).rows);
  }

  replaceKeptAnswer(key: string, from: string, to: string): Promise<boolean> {
    return this.#run(async () => (await this.#pool.query(sql.keptReplace, [key, from, to])).rowCount === 1);
  }

  takeWebhookTest(key: string, at: Date, most: number, windowMs: number): Promise<TestWindowTake> {
    return this.#run(async () => {
      const endedBy = new Date(at.getTime() - windowMs);
      await this.#pool.query(sql.windowsPrune, [endedBy, PRUNED_PER_WRITE]);
      const taken = await this.#pool.query(sql.windowTake, [key, at, endedBy, most]);
      if (taken.rowCount === 1) return { outcome: 'taken' };
      const { rows } = await this.#pool.query<{ started_at: Date }>(sql.windowGet, [key]);
      const startedAt = rows[0]?.started_at.getTime() ?? at.getTime() - windowMs;
      return { outcome: 'limited', retryInMs: Math.max(0, startedAt + windowMs - at.getTime()) };
    });
  }
}
