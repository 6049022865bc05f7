import { PlantClientError } from './errors.ts';
import type { HeaderMap, TokenSource } from './options.ts';
import { VERSION } from './version.ts';

/** Sent with every attempt: 0 on the first, 1 on the first retry, … so the server can tell them apart. */
export const RETRY_COUNT_HEADER = 'x-retry-count';

const runtime = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
/** Browsers send their own User-Agent (a page's may be dropped or refused), so it is set elsewhere only. */
const USER_AGENT =
  runtime.document === undefined && runtime.WorkerGlobalScope === undefined ? `plant-client/${VERSION}` : undefined;

export const hasAuthorization = (headers: HeaderMap): boolean =>
  Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');

/** The `Authorization` value of an attempt, from the token or the function giving it. */
export const createAuthorization = (token: TokenSource): (() => string | Promise<string>) => {
  if (typeof token === 'string') {
    const value = `Bearer ${token}`;
    return () => value;
  }
  return async () => {
    let value: unknown;
    try {
      value = await token();
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new PlantClientError(`The token function failed: ${reason}`, { cause: error });
    }
    if (typeof value !== 'string' || value === '') {
      throw new PlantClientError('The token function gave no token: it must give a non-empty string.');
    }
    return `Bearer ${value}`;
  };
};

/**
 * The headers of one attempt: the User-Agent (unless the caller sets one), what ts-rest built (the
 * default headers, the call's own and the content type, names in lower case), the bearer token and
 * the retry count.
 */
export const attemptHeaders = (built: HeaderMap, authorization: string, retry: number): Record<string, string> => {
  const headers: Record<string, string> = USER_AGENT ? { 'user-agent': USER_AGENT, ...built } : { ...built };
  headers.authorization = authorization;
  headers[RETRY_COUNT_HEADER] = String(retry);
  return headers;
};
