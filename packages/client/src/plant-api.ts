import { restoreExactIntegers } from '@org/plant-contract';
import { type ApiFetcherArgs, validateResponse as checkResponse } from '@ts-rest/core';
import { PlantClientError } from './errors.ts';
import { createFetcher, type FetchedAnswer } from './fetcher.ts';
import { createLog } from './logger.ts';
import {
  checkMaxRetries,
  checkTimeout,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type PlantClientOptions,
  type RetryOptions,
} from './options.ts';
import { attemptHeaders, createAuthorization, hasAuthorization } from './request-headers.ts';
import { withRetries } from './retry.ts';

/**
 * What a call of the ts-rest client may add to ts-rest's own arguments (`params`, `query`, `body`,
 * `fetchOptions: { signal }`, …): this call's timeout and retries, over the client's.
 */
export type PlantCallOptions = { [Key in keyof RetryOptions]?: RetryOptions[Key] | undefined };

export type PlantApiArgs = ApiFetcherArgs & PlantCallOptions;

/** The `api` function handed to ts-rest's `initClient`. */
export type PlantApi = (args: PlantApiArgs) => Promise<FetchedAnswer>;

/** Answers after which an earlier attempt may have been carried out (see `afterUncertainAttempt`). */
const uncertain = new WeakSet<FetchedAnswer>();

/**
 * Whether an attempt before the one that gave `answer` got no answer or a 5xx, so the server may
 * have carried it out: a DELETE answered 404 then most likely means that attempt deleted the plant.
 */
export const afterUncertainAttempt = (answer: object): boolean => uncertain.has(answer as FetchedAnswer);

/**
 * ts-rest's extension point (`initClient(contract, { api })`), doing what ts-rest does not. ts-rest
 * has built the URL (path parameters, query), the headers and the JSON body; this sends it through
 * the configured `fetch` with a timeout per attempt, retries (backoff, Retry-After) and the caller's
 * signal, adds each attempt's token and retry count, logs each attempt, and reads JSON answers with
 * exact int64 integers. Bodies were made writable digit for digit by `exactJsonBody`; the text
 * ts-rest wrote is finished here where `JSON.rawJSON` is missing.
 */
export const createPlantApi = (
  options: Pick<PlantClientOptions, 'fetch' | 'token' | 'logger' | 'logLevel' | keyof RetryOptions>,
): PlantApi => {
  const defaultTimeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const defaultMaxRetries = checkMaxRetries(options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const fetchOnce = createFetcher(options.fetch ?? ((input, init) => globalThis.fetch(input, init)));
  const authorization = createAuthorization(options.token);
  const log = createLog(options.logger, options.logLevel);

  return async ({ route, path, method, headers, body, fetchOptions, validateResponse, timeoutMs, maxRetries }) => {
    if (hasAuthorization(headers)) {
      throw new PlantClientError(
        "Authorization is set from the client's token; a request cannot set it in its headers.",
      );
    }
    const signal = fetchOptions?.signal ?? undefined;
    const attempt = { timeoutMs: timeoutMs === undefined ? defaultTimeoutMs : checkTimeout(timeoutMs), signal };
    const sent = typeof body === 'string' ? restoreExactIntegers(body) : body;
    const retries = maxRetries === undefined ? defaultMaxRetries : checkMaxRetries(maxRetries);
    const outcome = await withRetries<FetchedAnswer>(
      async (retry) => {
        // A string token is at hand: no await, so that the attempt starts in the same tick.
        const token = authorization();
        const value = typeof token === 'string' ? token : await token;
        // Each attempt gets an init of its own: its signal is set for it, and a custom fetch may change it.
        const init: RequestInit = { ...fetchOptions, method, headers: attemptHeaders(headers, value, retry) };
        if (sent != null) init.body = sent;
        if (!log.debug) return fetchOnce(path, init, attempt);
        const started = performance.now();
        const details = { method, url: path, attempt: retry + 1 };
        try {
          const answer = await fetchOnce(path, init, attempt);
          const requestId = answer.headers.get('x-request-id') ?? undefined;
          const durationMs = Math.round(performance.now() - started);
          log.debug(`plant-client: ${method} ${path} attempt ${retry + 1}: ${answer.status} in ${durationMs} ms`, {
            ...details,
            status: answer.status,
            durationMs,
            requestId,
          });
          return answer;
        } catch (error) {
          const durationMs = Math.round(performance.now() - started);
          const name = error instanceof Error ? error.name : typeof error;
          log.debug(`plant-client: ${method} ${path} attempt ${retry + 1}: ${name} in ${durationMs} ms`, {
            ...details,
            error: name,
            durationMs,
          });
          throw error;
        }
      },
      {
        maxRetries: retries,
        signal,
        onRetry:
          log.info &&
          ((retry, delayMs, why) => {
            const cause =
              'answer' in why ? `${why.answer.status}` : why.error instanceof Error ? why.error.name : 'error';
            log.info?.(
              `plant-client: ${method} ${path} retry ${retry} of ${retries} in ${Math.round(delayMs)} ms after ${cause}`,
              {
                method,
                url: path,
                retry,
                delayMs: Math.round(delayMs),
              },
            );
          }),
      },
    );
    const { answer } = outcome;
    if (outcome.afterUncertainAttempt) uncertain.add(answer);
    // ts-rest's option (or the contract's validateResponseOnClient): the body through its schema.
    if (validateResponse ?? route.validateResponseOnClient) {
      answer.body = checkResponse({ appRoute: route, response: answer }).body;
    }
    return answer;
  };
};
