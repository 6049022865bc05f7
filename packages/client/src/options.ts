import type { FetchLike } from './fetcher.ts';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RETRIES = 2;

/** Settings a client gives every request, and a single request may override. */
export type RetryOptions = {
  /**
   * Milliseconds each attempt may wait for its answer before it fails with PlantTimeoutError (and is
   * retried, while retries remain); default 10 000, `Infinity` for none.
   */
  timeoutMs?: number;
  /**
   * How many times a request is sent again after a connection error, a timeout, 408, 429 or 5xx;
   * default 2, `0` to fail at once.
   */
  maxRetries?: number;
};

export type PlantClientOptions = RetryOptions & {
  /** Where the API is reached, e.g. `https://plants.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** The bearer token sent as `Authorization: Bearer <token>`. */
  token: string;
  /** A `fetch` to use instead of the global one (for proxies, tests, instrumentation). */
  fetch?: FetchLike;
};

export type RequestOptions = RetryOptions & {
  /**
   * Cancels the request, including any wait before a retry; the promise then rejects with the
   * signal's reason, and nothing is retried.
   */
  signal?: AbortSignal;
};

export const checkTimeout = (timeoutMs: number): number => {
  if (!(timeoutMs > 0)) throw new RangeError('timeoutMs must be a positive number of milliseconds or Infinity.');
  return timeoutMs;
};

export const checkMaxRetries = (maxRetries: number): number => {
  if (!(Number.isSafeInteger(maxRetries) && maxRetries >= 0)) {
    throw new RangeError('maxRetries must be a whole number, 0 or more.');
  }
  return maxRetries;
};
