import { restoreExactIntegers } from '@org/plant-contract';
import { type ApiFetcherArgs, validateResponse as checkResponse } from '@ts-rest/core';
import { createFetcher, type FetchedAnswer } from './fetcher.ts';
import {
  checkMaxRetries,
  checkTimeout,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type PlantClientOptions,
  type RetryOptions,
} from './options.ts';
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
 * signal, and reads JSON answers with exact int64 integers. Bodies were made writable digit for
 * digit by `exactJsonBody`; the text ts-rest wrote is finished here where `JSON.rawJSON` is missing.
 */
export const createPlantApi = (options: Pick<PlantClientOptions, 'fetch' | keyof RetryOptions>): PlantApi => {
  const defaultTimeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const defaultMaxRetries = checkMaxRetries(options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const fetchOnce = createFetcher(options.fetch ?? ((input, init) => globalThis.fetch(input, init)));

  return async ({ route, path, method, headers, body, fetchOptions, validateResponse, timeoutMs, maxRetries }) => {
    const signal = fetchOptions?.signal ?? undefined;
    const attempt = { timeoutMs: timeoutMs === undefined ? defaultTimeoutMs : checkTimeout(timeoutMs), signal };
    const sent = typeof body === 'string' ? restoreExactIntegers(body) : body;
    const outcome = await withRetries(
      (retry) => {
        // Each attempt gets an init of its own: its signal is set for it, and a custom fetch may change it.
        const init: RequestInit = { ...fetchOptions, method, headers: retry === 0 ? headers : { ...headers } };
        if (sent != null) init.body = sent;
        return fetchOnce(path, init, attempt);
      },
      { maxRetries: maxRetries === undefined ? defaultMaxRetries : checkMaxRetries(maxRetries), signal },
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
