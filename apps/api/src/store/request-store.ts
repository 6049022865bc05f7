/**
 * What the store keeps about requests rather than resources: the answers kept for Idempotency-Keys,
 * and the windows of test deliveries. Both are keyed by the principal that sent the request (see
 * `clientKey`), so they hold across replicas and outlive the resources they name; both prune
 * themselves wherever they are written, so no background task is needed to bound them.
 */

/** What claimIdempotencyKey is asked: see RequestStore.claimIdempotencyKey. */
export type IdempotencyKeyClaim = {
  /** The principal's key and the client's key, digested. */
  key: string;
  /** The principal, digested: its live keys are counted against `maxPerPrincipal`. */
  principal: string;
  fingerprint: string;
  at: Date;
  expiredBefore: Date;
  staleBefore: Date;
  /** Keys a principal may have live (claimed at or after `expiredBefore`) at once. */
  maxPerPrincipal: number;
};

/**
 * What a request with an Idempotency-Key finds: the key is now its own (claimed), the first request
 * with it still runs, it came with another request (another route or body), the first answer, or
 * the principal holds its most live keys (until its oldest expires, at `oldestExpiresAt`).
 */
export type IdempotencyClaim =
  | { outcome: 'claimed' }
  | { outcome: 'running' }
  | { outcome: 'mismatch' }
  | { outcome: 'done'; status: number; body: string }
  | { outcome: 'too-many'; oldestAt: Date };

/** A kept answer as stored. */
export type KeptAnswer = { key: string; body: string };

/** Whether a test delivery may go now, or how long until its window has room again. */
export type TestWindowTake = { outcome: 'taken' } | { outcome: 'limited'; retryInMs: number };

/** Expired keys and past windows deleted by each write, at most: a few rows, never a stall. */
export const PRUNED_PER_WRITE = 8;

export interface RequestStore {
  /**
   * Claims `key` for the request `fingerprint` at `at`, unless it is held: a key recorded before
   * `expiredBefore`, or claimed before `staleBefore` and never finished (its process died), is
   * claimed anew. A new key is refused (too-many) while the principal has `maxPerPrincipal` live.
   * Deletes up to PRUNED_PER_WRITE keys recorded before `expiredBefore` on the way.
   */
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaim>;
  /** Records the answer of the request that claimed `key` (its body as stored: sealed or plain JSON). */
  finishIdempotencyKey(key: string, fingerprint: string, status: number, body: string): Promise<void>;
  /** Gives up a claim that was not finished, so that a retry runs the request again. */
  releaseIdempotencyKey(key: string, fingerprint: string): Promise<void>;
  /** Up to `limit` kept answers stored in plain text (kept before a secrets key was set). */
  plainKeptAnswers(limit: number): Promise<KeptAnswer[]>;
  /** Replaces a kept answer if it is still `from`; resolves whether it was. */
  replaceKeptAnswer(key: string, from: string, to: string): Promise<boolean>;
  /**
   * Takes one test delivery from the window of `key` (a principal's and an endpoint URL's, digested):
   * a window opens at its first test and holds `most` tests for `windowMs`. Deletes up to
   * PRUNED_PER_WRITE past windows on the way.
   */
  takeWebhookTest(key: string, at: Date, most: number, windowMs: number): Promise<TestWindowTake>;
}
