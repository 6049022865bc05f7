import type { FetchLike } from './fetcher.ts';
import type { PlantLogger, PlantLogLevel } from './logger.ts';

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

/**
 * The bearer token, or a function giving it: called before every attempt (retries included), so a
 * short-lived JWT refreshed by your identity provider's SDK is picked up without a new client.
 */
export type TokenSource = string | (() => string | Promise<string>);

/** Header names and values; names are case-insensitive. */
export type HeaderMap = Readonly<Record<string, string>>;

export type PlantClientOptions = RetryOptions & {
  /** Where the API is reached, e.g. `https://plants.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`; no other option or call may set `Authorization`. */
  token: TokenSource;
  /** Headers sent with every request (a call's `headers` win over them). */
  defaultHeaders?: HeaderMap;
  /** A `fetch` to use instead of the global one (for proxies, tests, instrumentation). */
  fetch?: FetchLike;
  /** Where the client logs (default `console`); it never logs the token or any header. */
  logger?: PlantLogger;
  /**
   * The least severe level logged (default `warn`): `debug` logs one line per attempt, `info` each
   * retry and why.
   */
  logLevel?: PlantLogLevel;
};

export type RequestOptions = RetryOptions & {
  /**
   * Cancels the request, including any wait before a retry: the promise then rejects with a
   * PlantAbortError whose `cause` is the signal's reason (a PlantTimeoutError for
   * `AbortSignal.timeout()`), and nothing is retried.
   */
  signal?: AbortSignal;
  /** Headers for this call alone, over `defaultHeaders`. */
  headers?: HeaderMap;
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
