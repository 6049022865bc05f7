import { IDEMPOTENCY_KEY_TTL_MS } from '@org/plant-contract';
import type { Answer } from './answers.ts';

type Entry = { fingerprint: string; at: number; answer?: Answer };

/** What a request with an Idempotency-Key finds, as the service's store answers its claim. */
export type KeyClaim =
  | { outcome: 'claimed' }
  | { outcome: 'running' }
  | { outcome: 'mismatch' }
  | { outcome: 'done'; answer: Answer };

/**
 * The Idempotency-Keys the fake holds, per credential and key, as the service keeps them: the
 * first answer for IDEMPOTENCY_KEY_TTL_MS, by the fake's clock. In memory: a fake that is `reset`
 * forgets them, as it forgets everything.
 */
export class IdempotencyKeys {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => Date;

  constructor(now: () => Date) {
    this.#now = now;
  }

  /** Claims `key` for the request `fingerprint`, unless a request with it ran or runs within the TTL. */
  claim(key: string, fingerprint: string): KeyClaim {
    const at = this.#now().getTime();
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.at <= at - IDEMPOTENCY_KEY_TTL_MS) {
      this.#entries.set(key, { fingerprint, at });
      return { outcome: 'claimed' };
    }
    if (entry.fingerprint !== fingerprint) return { outcome: 'mismatch' };
    return entry.answer === undefined ? { outcome: 'running' } : { outcome: 'done', answer: entry.answer };
  }

  /** Keeps the claimed request's answer to replay. */
  finish(key: string, answer: Answer): void {
    const entry = this.#entries.get(key);
    if (entry !== undefined) entry.answer = answer;
  }

  /** Gives up a claim, so that a retry runs the request again. */
  release(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
