import { abortErrorFor, PlantConnectionError, PlantTimeoutError } from './errors.ts';

/** First backoff ceiling; it doubles with each retry up to MAX_BACKOFF_MS. */
export const INITIAL_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/** The longest wait a Retry-After header can impose; longer ones are shortened to this. */
export const MAX_RETRY_AFTER_MS = 60_000;

/** What an attempt answered: enough to decide on a retry. */
export type Answer = { status: number; headers: Headers };

/** 408 and 429 ask to come back later; a 5xx may be transient. Other statuses would answer the same again. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * A retryable status, or a 409 with Retry-After: the same Idempotency-Key's first request still runs
 * (a conflict of state, as a taken URL, comes without one and would answer the same again).
 */
export const isRetryableAnswer = ({ status, headers }: Answer): boolean =>
  isRetryableStatus(status) || (status === 409 && headers.has('retry-after'));

/** No answer at all, or none within the timeout: the request may or may not have reached the server. */
export const isRetryableError = (error: unknown): boolean =>
  PlantConnectionError.isInstance(error) || PlantTimeoutError.isInstance(error);

/**
 * Milliseconds the server asked to wait (`Retry-After` as seconds or an HTTP date), at most
 * MAX_RETRY_AFTER_MS, or undefined when the header is absent or unreadable.
 */
export const retryAfterMs = (header: string | null, now = Date.now()): number | undefined => {
  if (header === null) return undefined;
  const text = header.trim();
  const ms = /^\d+$/.test(text) ? Number(text) * 1000 : /[a-z]/i.test(text) ? Date.parse(text) - now : Number.NaN;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
};

/**
 * The wait before retry number `retry` (0 for the first): exponential backoff with full jitter, so
 * that many clients failing together do not come back together. When the server gave a
 * `Retry-After`, never less than that: the jitter is added on top of it, since clients shed
 * together all get the same `Retry-After` and would otherwise return as one new surge.
 */
export const retryDelayMs = (retry: number, answer: Answer | undefined, random = Math.random): number =>
  (retryAfterMs(answer?.headers.get('retry-after') ?? null) ?? 0) +
  random() * Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** retry);

/** Resolves after `ms`, or rejects (see `abortErrorFor`) as soon as the signal aborts. */
export const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortErrorFor(signal));
    const onAbort = () => {
      clearTimeout(timer);
      if (signal) reject(abortErrorFor(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export type RetrySettings = {
  maxRetries: number;
  signal: AbortSignal | undefined;
  /** Told before each wait: which retry comes next, after how long, and why. */
  onRetry?: ((retry: number, delayMs: number, why: { answer: Answer } | { error: unknown }) => void) | undefined;
};

export type Outcome<T extends Answer> = {
  answer: T;
  /**
   * An earlier attempt got no answer or a 5xx, so the server may have carried it out: a retried
   * DELETE answered 404 then most likely means the first attempt deleted the plant.
   */
  afterUncertainAttempt: boolean;
};

/**
 * Runs `attempt` (given how many retries came before it) until it gives an answer that is not worth
 * retrying, or `maxRetries` retries are spent. Connection errors and timeouts are retried too; the
 * last one is thrown. Nothing is retried once the caller's signal has aborted: the abort's error
 * (see `abortErrorFor`) is thrown instead.
 */
export const withRetries = async <T extends Answer>(
  attempt: (retry: number) => Promise<T>,
  { maxRetries, signal, onRetry }: RetrySettings,
): Promise<Outcome<T>> => {
  let afterUncertainAttempt = false;
  for (let retry = 0; ; retry++) {
    if (signal?.aborted) throw abortErrorFor(signal);
    let answer: T;
    try {
      answer = await attempt(retry);
    } catch (error) {
      if (signal?.aborted) throw abortErrorFor(signal);
      if (!isRetryableError(error) || retry >= maxRetries) throw error;
      afterUncertainAttempt = true;
      const delayMs = retryDelayMs(retry, undefined);
      onRetry?.(retry + 1, delayMs, { error });
      await sleep(delayMs, signal);
      continue;
    }
    if (!isRetryableAnswer(answer) || retry >= maxRetries) return { answer, afterUncertainAttempt };
    if (answer.status >= 500) afterUncertainAttempt = true;
    const delayMs = retryDelayMs(retry, answer);
    onRetry?.(retry + 1, delayMs, { answer });
    await sleep(delayMs, signal);
  }
};
