import { parseExactJson, restoreExactIntegers } from '@org/plant-contract';
import type { ApiFetcher } from '@ts-rest/core';
import { PlantConnectionError, PlantTimeoutError } from './errors.ts';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

const isJson = (contentType: string | null): boolean =>
  contentType !== null && /^application\/([\w.+-]+\+)?json\b/i.test(contentType);

/**
 * The ts-rest fetcher of this client: the given `fetch`, a timeout, and exact JSON both ways,
 * with transport failures turned into PlantConnectionError / PlantTimeoutError.
 */
export const createFetcher =
  (fetchImpl: FetchLike, timeoutMs: number): ApiFetcher =>
  async ({ path, method, headers, body, fetchOptions }) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const callerSignal = fetchOptions?.signal ?? undefined;
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
    const init: RequestInit = { method, headers, signal };
    if (body !== undefined && body !== null) init.body = typeof body === 'string' ? restoreExactIntegers(body) : body;
    try {
      const response = await fetchImpl(path, init);
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        body: isJson(response.headers.get('content-type')) && text !== '' ? parseExactJson(text) : text,
      };
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (timeout.aborted) {
        throw new PlantTimeoutError(`${method} ${path} got no answer within ${timeoutMs} ms.`, { cause: error });
      }
      if (error instanceof SyntaxError) throw error;
      throw new PlantConnectionError(`${method} ${path} failed: ${(error as Error).message}`, { cause: error });
    }
  };
