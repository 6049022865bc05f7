/**
 * The request operations of the embedded store (see request-store.ts): their SQL, what the database
 * thread runs, and how the store decodes it (sqlite-request-store.ts submits them).
 */
import type { DatabaseSync } from 'node:sqlite';
import { type IdempotencyClaim, type KeptAnswer, PRUNED_PER_WRITE, type TestWindowTake } from '../request-store.ts';
import { operation, type Thread } from './operation.ts';

/** The statements of idempotency keys and test windows, prepared once. */
export const requestStatements = (db: DatabaseSync) => ({
  keysPrune: db.prepare(
    `DELETE FROM idempotency_keys WHERE key IN (
       SELECT key FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ? + 0
     )`,
  ),
  keyExpire: db.prepare(
    'DELETE FROM idempotency_keys WHERE key = ? AND (created_at < ? OR (status IS NULL AND created_at < ?))',
  ),
  keyGet: db.prepare('SELECT fingerprint, status, body FROM idempotency_keys WHERE key = ?'),
  keysLive: db.prepare(
    'SELECT count(*) AS live, min(created_at) AS oldest FROM idempotency_keys WHERE principal = ? AND created_at >= ?',
  ),
  keyClaim: db.prepare('INSERT INTO idempotency_keys (key, principal, fingerprint, created_at) VALUES (?, ?, ?, ?)'),
  keyFinish: db.prepare(
    'UPDATE idempotency_keys SET status = ?, body = ? WHERE key = ? AND fingerprint = ? AND status IS NULL',
  ),
  keyRelease: db.prepare('DELETE FROM idempotency_keys WHERE key = ? AND fingerprint = ? AND status IS NULL'),
  keptPlain: db.prepare(
    `SELECT key, body FROM idempotency_keys
     WHERE status IS NOT NULL AND substr(body, 1, 9) <> 'whenc_v1.' LIMIT ? + 0`,
  ),
  keptReplace: db.prepare('UPDATE idempotency_keys SET body = ? WHERE key = ? AND body = ?'),
  windowsPrune: db.prepare(
    `DELETE FROM webhook_test_windows WHERE key IN (
       SELECT key FROM webhook_test_windows WHERE started_at <= ? ORDER BY started_at LIMIT ? + 0
     )`,
  ),
  windowGet: db.prepare('SELECT started_at, tests FROM webhook_test_windows WHERE key = ?'),
  windowOpen: db.prepare(
    `INSERT INTO webhook_test_windows (key, started_at, tests) VALUES (?, ?, 1)
     ON CONFLICT (key) DO UPDATE SET started_at = excluded.started_at, tests = 1`,
  ),
  windowTake: db.prepare('UPDATE webhook_test_windows SET tests = tests + 1 WHERE key = ?'),
});

const write = { writes: true, outbox: false, announces: false } as const;
const read = { writes: false, outbox: false, announces: false } as const;

export const requestOperations = {
  /** → what the request with this Idempotency-Key finds (see RequestStore.claimIdempotencyKey). */
  claimIdempotencyKey: operation({
    ...write,
    arity: 7,
    run: (
      thread: Thread,
      key: string,
      principal: string,
      fingerprint: string,
      at: number,
      expiredBefore: number,
      staleBefore: number,
      maxPerPrincipal: number,
    ): IdempotencyClaim => {
      const { requests } = thread;
      thread.beginWrite();
      requests.keysPrune.run(expiredBefore, PRUNED_PER_WRITE);
      requests.keyExpire.run(key, expiredBefore, staleBefore);
      const row = requests.keyGet.get(key) as
        | { fingerprint: string; status: number | null; body: string | null }
        | undefined;
      if (row !== undefined) {
        if (row.fingerprint !== fingerprint) return { outcome: 'mismatch' };
        if (row.status === null) return { outcome: 'running' };
        return { outcome: 'done', status: row.status, body: row.body ?? '' };
      }
      const { live, oldest } = requests.keysLive.get(principal, expiredBefore) as { live: number; oldest: number };
      if (live >= maxPerPrincipal) return { outcome: 'too-many', oldestAt: new Date(oldest) };
      requests.keyClaim.run(key, principal, fingerprint, at);
      return { outcome: 'claimed' };
    },
  }),
  /** → true; records the claimed request's answer. */
  finishIdempotencyKey: operation({
    ...write,
    arity: 4,
    run: (thread: Thread, key: string, fingerprint: string, status: number, body: string): true => {
      thread.beginWrite();
      thread.requests.keyFinish.run(status, body, key, fingerprint);
      return true;
    },
  }),
  /** → true; gives an unfinished claim up. */
  releaseIdempotencyKey: operation({
    ...write,
    arity: 2,
    run: (thread: Thread, key: string, fingerprint: string): true => {
      thread.beginWrite();
      thread.requests.keyRelease.run(key, fingerprint);
      return true;
    },
  }),
  /** → up to `limit` kept answers in plain text, as flat [key, body, key, body…]. */
  plainKeptAnswers: operation({
    ...read,
    arity: 1,
    run: (thread: Thread, limit: number): string[] =>
      (thread.requests.keptPlain.all(limit) as KeptAnswer[]).flatMap(({ key, body }) => [key, body]),
    decode: (_: undefined, flat: string[]): KeptAnswer[] => {
      const answers: KeptAnswer[] = [];
      for (let at = 0; at < flat.length; at += 2)
        answers.push({ key: flat[at] as string, body: flat[at + 1] as string });
      return answers;
    },
  }),
  /** → whether the kept answer was still `from`, and is `to` now. */
  replaceKeptAnswer: operation({
    ...write,
    arity: 3,
    run: (thread: Thread, key: string, from: string, to: string): boolean => {
      thread.beginWrite();
      return thread.requests.keptReplace.run(to, key, from).changes === 1;
    },
  }),
  /** → whether the test may go (see RequestStore.takeWebhookTest). */
  takeWebhookTest: operation({
    ...write,
    arity: 4,
    run: (thread: Thread, key: string, at: number, most: number, windowMs: number): TestWindowTake => {
      const { requests } = thread;
      thread.beginWrite();
      requests.windowsPrune.run(at - windowMs, PRUNED_PER_WRITE);
      const window = requests.windowGet.get(key) as { started_at: number; tests: number } | undefined;
      if (window === undefined || window.started_at <= at - windowMs) {
        requests.windowOpen.run(key, at);
        return { outcome: 'taken' };
      }
      if (window.tests >= most) return { outcome: 'limited', retryInMs: window.started_at + windowMs - at };
      requests.windowTake.run(key);
      return { outcome: 'taken' };
    },
  }),
};
