import cors, { type CorsOptions } from 'cors';
import type { Request, RequestHandler } from 'express';
import { HttpError } from './http-error.ts';

/** `*` alone, or exact `scheme://host[:port]` origins as browsers send them in `Origin`. */
export type CorsOrigins = '*' | readonly string[];

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
const CORS_MAX_AGE_SECONDS = 600;

/**
 * What the client reads from answers: pages, retry delays, request ids, why a token was refused and
 * whether an answer was replayed for an Idempotency-Key.
 */
const EXPOSED_HEADERS = ['Link', 'Retry-After', 'X-Request-Id', 'WWW-Authenticate', 'Idempotent-Replayed'];
// X-Retry-Count: @org/plant-client numbers its attempts, for the request log.
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Retry-Count', 'Idempotency-Key'];

/**
 * The CORS headers of an answer made outside the app (admission control's 503), for the origin of
 * the request: what lets an allowed page read it; undefined for other origins and for no origin.
 */
export const corsAnswerHeaders = (
  origins: CorsOrigins,
): ((origin: string | undefined) => Readonly<Record<string, string>> | undefined) => {
  const exposed = EXPOSED_HEADERS.join(',');
  if (origins === '*') {
    const headers = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': exposed };
    return (origin) => (origin === undefined ? undefined : headers);
  }
  const allowed = new Set(origins);
  return (origin) =>
    origin !== undefined && allowed.has(origin)
      ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin', 'Access-Control-Expose-Headers': exposed }
      : undefined;
};

const isPreflight = (req: Request): boolean =>
  req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;

/**
 * The `cors` middleware for the allowed origins and the contract's methods. Placed before
 * authentication, so preflights are answered without a token and every later answer, errors
 * included, carries the headers the browser needs to let the page read it. Other origins get no
 * CORS headers; their preflight is refused with 403 so that the page's fetch fails at once.
 */
export const corsHeaders = (origins: CorsOrigins, methods: readonly string[]): RequestHandler => {
  const allowed = origins === '*' ? undefined : new Set(origins);
  const common: CorsOptions = {
    methods: [...methods],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: CORS_MAX_AGE_SECONDS,
  };
  // With `*` the answer is the same for every origin, so it needs no `Vary: Origin`.
  const everyOrigin: CorsOptions = { ...common, origin: '*' };
  const ownOrigin: CorsOptions = { ...common, origin: true };
  const noHeaders: CorsOptions = { origin: false };
  return cors<Request>((req, callback) => {
    const origin = req.headers.origin;
    if (origin === undefined) return callback(null, noHeaders);
    if (allowed === undefined) return callback(null, everyOrigin);
    if (allowed.has(origin)) return callback(null, ownOrigin);
    if (isPreflight(req)) {
      return callback(
        new HttpError(403, `The origin ${JSON.stringify(origin.slice(0, 100))} is not allowed (PLANT_CORS_ORIGINS).`),
        noHeaders,
      );
    }
    return callback(null, noHeaders);
  });
};
