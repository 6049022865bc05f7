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
    const timeout = Number.isFinite(timeoutMs) ? AbortSignal.timeout(timeoutMs) : undefined;
    const callerSignal = fetchOptions?.signal ?? undefined;
    const signals = [callerSignal, timeout].filter((signal) => signal !== undefined);
    const init: RequestInit = { method, headers };
    const [only] = signals;
    if (only) init.signal = signals.length === 1 ? only : AbortSignal.any(signals);
    if (body !== undefined && body !== null) init.body = typeof body === 'string' ? restoreExactIntegers(body) : body;
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(path, init);
      text = await response.text();
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (timeout?.aborted) {
        throw new PlantTimeoutError(`${method} ${path} got no answer within ${timeoutMs} ms.`, { cause: error });
      }
      throw new PlantConnectionError(`${method} ${path} failed: ${(error as Error).message}`, { cause: error });
    }
    return { status: response.status, headers: response.headers, body: parseBody(response, text) };
  };

/** The body as JSON when it says so and is; otherwise its text, for the caller to report. */
const parseBody = (response: Response, text: string): unknown => {
  if (text === '' || !isJson(response.headers.get('content-type'))) return text;
  try {
    return parseExactJson(text);
  } catch {
    return text;
  }
};
