import { parseExactJson, restoreExactIntegers } from '@org/plant-contract';
import type { ApiFetcherArgs } from '@ts-rest/core';
import { PlantConnectionError, PlantTimeoutError } from './errors.ts';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** What one attempt answered, as ts-rest expects it. */
export type FetchedAnswer = { status: number; headers: Headers; body: unknown };

/**
 * The ts-rest fetcher of this client, one attempt per call: the given `fetch`, the attempt's
 * timeout (`timeoutMs`, an argument ts-rest passes through), and exact JSON both ways, with
 * transport failures turned into PlantConnectionError / PlantTimeoutError.
 */
export const createFetcher =
  (fetchImpl: FetchLike) =>
  async ({
    path,
    method,
    headers,
    body,
    fetchOptions,
    timeoutMs = Number.POSITIVE_INFINITY,
  }: ApiFetcherArgs & { timeoutMs?: number }): Promise<FetchedAnswer> => {
    const callerSignal = fetchOptions?.signal ?? undefined;
    const init: RequestInit = { method, headers };
    if (body !== undefined && body !== null) init.body = typeof body === 'string' ? restoreExactIntegers(body) : body;
    // One controller and a plain timer, cleared when the attempt ends: measurably cheaper per
    // request than AbortSignal.timeout with AbortSignal.any.
    let controller: AbortController | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let timedOut = false;
    const forwardAbort = () => controller?.abort(callerSignal?.reason);
    if (callerSignal || Number.isFinite(timeoutMs)) {
      controller = new AbortController();
      init.signal = controller.signal;
      if (callerSignal?.aborted) forwardAbort();
      else callerSignal?.addEventListener('abort', forwardAbort, { once: true });
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          timedOut = true;
          controller?.abort(new DOMException(`No answer within ${timeoutMs} ms.`, 'TimeoutError'));
        }, timeoutMs);
      }
    }
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(path, init);
      text = await response.text();
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (timedOut) {
        throw new PlantTimeoutError(`${method} ${path} got no answer within ${timeoutMs} ms.`, { cause: error });
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new PlantConnectionError(`${method} ${path} failed: ${reason}`, { cause: error });
    } finally {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', forwardAbort);
    }
    return { status: response.status, headers: response.headers, body: parseBody(response, text) };
  };

const isJson = (contentType: string | null): boolean =>
  contentType !== null && /^application\/([\w.+-]+\+)?json\b/i.test(contentType);

/** The body as JSON when it says so and is; otherwise its text, for the caller to report. */
const parseBody = (response: Response, text: string): unknown => {
  if (text === '' || !isJson(response.headers.get('content-type'))) return text;
  try {
    return parseExactJson(text);
  } catch {
    return text;
  }
};
