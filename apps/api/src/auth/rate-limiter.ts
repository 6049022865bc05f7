/**
 * Token buckets per key: each key may spend `burst` requests at once and earns `perSecond` back.
 * Independent buckets mean one key's flood never slows another.
 */
export class RateLimiter {
  readonly #perSecond: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  #sinceSweep = 0;

  constructor({ perSecond, burst }: { perSecond: number; burst: number }) {
    this.#perSecond = perSecond;
    this.#burst = burst;
  }

  #bucket(key: string, now: number) {
    const bucket = this.#buckets.get(key) ?? { tokens: this.#burst, at: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + ((now - bucket.at) / 1000) * this.#perSecond);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    return bucket;
  }

  /** Spends one request for `key`; answers the seconds to wait when there was none left (0 when spent). */
  take(key: string, now = performance.now()): number {
    this.#sweep(now);
    const bucket = this.#bucket(key, now);
    if (bucket.tokens < 1) return Math.ceil((1 - bucket.tokens) / this.#perSecond);
    bucket.tokens -= 1;
    return 0;
  }

  /** Forgets full buckets now and then, so idle keys do not pile up. */
  #sweep(now: number) {
    this.#sinceSweep += 1;
    if (this.#sinceSweep < 10_000) return;
    this.#sinceSweep = 0;
    for (const [key, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.#perSecond >= this.#burst) this.#buckets.delete(key);
    }
  }
}
