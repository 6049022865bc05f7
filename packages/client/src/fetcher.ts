import { parseExactJson } from '@org/plant-contract';
import { createDeadlines, type Deadline } from './deadlines.ts';
import { abortErrorFor, PlantConnectionError, PlantTimeoutError } from './errors.ts';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** What one attempt answered: `response` is fetch's own, its body already read into `body`. */
export type FetchedAnswer = { status: number; headers: Headers; body: unknown; response: Response };

export type AttemptOptions = {
  /** `Infinity` for none. */
  timeoutMs: number;
  signal: AbortSignal | undefined;
};

/** Sends one attempt of a request, as `createFetcher` describes. */
export type Fetcher = (url: string, init: RequestInit, attempt: AttemptOptions) => Promise<FetchedAnswer>;

/**
 * Attempts through the given `fetch`: each bounded by its `timeoutMs`, its body read as JSON with
 * exact integers; transport failures become PlantConnectionError / PlantTimeoutError, and the
 * caller's abort rejects as `abortErrorFor` says. `init` is the attempt's own: its signal is set here.
 */
export const createFetcher = (fetchImpl: FetchLike): Fetcher => {
  const deadlines = createDeadlines();

  return async (url, init, { timeoutMs, signal }) => {
    let deadline: Deadline | undefined;
    let forwardAbort: (() => void) | undefined;
    let timedOut = false;
    if (timeoutMs !== Number.POSITIVE_INFINITY) {
      const controller = new AbortController();
      init.signal = controller.signal;
      deadline = deadlines.add(timeoutMs, () => {
        timedOut = true;
        controller.abort(new DOMException(`No answer within ${timeoutMs} ms.`, 'TimeoutError'));
      });
      if (signal) {
        forwardAbort = () => controller.abort(signal.reason);
        if (signal.aborted) forwardAbort();
        else signal.addEventListener('abort', forwardAbort, { once: true });
      }
    } else if (signal) {
      // Without a timeout the caller's signal is all there is to abort.
      init.signal = signal;
    }
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(url, init);
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw abortErrorFor(signal);
      if (timedOut) {
        throw new PlantTimeoutError(`${init.method} ${url} got no answer within ${timeoutMs} ms.`, { cause: error });
      }
      const reason = error instanceof Error ? error.message : String(error);
      throw new PlantConnectionError(`${init.method} ${url} failed: ${reason}`, { cause: error });
    } finally {
      if (deadline) deadlines.remove(deadline);
      if (forwardAbort) signal?.removeEventListener('abort', forwardAbort);
    }
    return { status: response.status, headers: response.headers, body: parseBody(response, text), response };
  };
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
