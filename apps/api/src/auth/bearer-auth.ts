import type { Request, RequestHandler } from 'express';
import { HttpError } from '../http/http-error.ts';
import { type Authenticator, AuthUnavailableError, type Principal } from './authenticator.ts';
import type { RateLimiter } from './rate-limiter.ts';

export const REALM = 'plant-store';

/** RFC 6750 §2.1 b64token. */
const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export const WRITE_SCOPE = 'plants:write';
export const READ_SCOPE = 'plants:read';

const challenge = (error?: { code: string; description: string; scope?: string }): Record<string, string> => ({
  'WWW-Authenticate': error
    ? `Bearer realm="${REALM}", error="${error.code}", error_description="${error.description}"${
        error.scope ? `, scope="${error.scope}"` : ''
      }`
    : `Bearer realm="${REALM}"`,
});

export type BearerAuthOptions = {
  authenticate: Authenticator;
  /** Requests per token; undefined for no limit. */
  perToken?: RateLimiter;
  /** Failed authentications per client address; undefined for no limit. */
  failuresPerAddress?: RateLimiter;
  /** Whether tokens must carry `plants:write` / `plants:read` scopes (JWT mode). */
  requireScopes?: boolean;
};

const tooMany = (seconds: number, message: string) =>
  new HttpError(429, `${message}; retry after ${seconds} s.`, { 'Retry-After': String(seconds) });

/**
 * How many Authorization headers the request has. Reads the raw list, which Node already holds:
 * `req.headersDistinct` would build an object of every header on each request (profiled).
 */
const authorizationHeaders = (raw: readonly string[]): number => {
  let count = 0;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index] as string;
    if (name.length === 13 && name.toLowerCase() === 'authorization') count += 1;
  }
  return count;
};

/** The token of a well-formed `Authorization: Bearer <token>`; throws the RFC 6750 answer otherwise. */
const bearerToken = (req: Request): string => {
  if (req.query.access_token !== undefined) {
    // RFC 6750 §2.3 allows it, but URLs end up in logs, histories and proxies: refuse it.
    const description = 'Send the token in the Authorization header, not in the query string.';
    throw new HttpError(400, description, challenge({ code: 'invalid_request', description }));
  }
  if (authorizationHeaders(req.rawHeaders) > 1) {
    // Node keeps only the first of several Authorization headers; which one was meant is unclear.
    const description = 'Send exactly one Authorization header.';
    throw new HttpError(400, description, challenge({ code: 'invalid_request', description }));
  }
  const header = req.headers.authorization;
  if (header === undefined || header.trim() === '') {
    throw new HttpError(401, 'Authentication is required: send Authorization: Bearer <token>.', challenge());
  }
  const [scheme = '', ...rest] = header.trim().split(/\s+/);
  // Auth schemes are case-insensitive (RFC 9110 §11.1).
  if (scheme.toLowerCase() !== 'bearer') {
    throw new HttpError(401, 'Unsupported authorization scheme: use Bearer.', challenge());
  }
  const [token] = rest;
  if (rest.length !== 1 || token === undefined || !B64_TOKEN.test(token)) {
    const description = 'The Authorization header must be Bearer followed by one token.';
    throw new HttpError(400, description, challenge({ code: 'invalid_request', description }));
  }
  return token;
};

export const WEBHOOKS_WRITE_SCOPE = 'webhooks:write';
export const WEBHOOKS_READ_SCOPE = 'webhooks:read';

/** The scopes of the route's resource: `/webhooks…` routes have their own, every other route is about plants. */
const scopesOf = (route: string | undefined) =>
  route?.startsWith('/webhooks')
    ? { read: WEBHOOKS_READ_SCOPE, write: WEBHOOKS_WRITE_SCOPE }
    : { read: READ_SCOPE, write: WRITE_SCOPE };

const checkScope = (req: Request & { tsRestRoute?: { path: string } }, principal: Principal): void => {
  if (principal.scopes === undefined) return;
  // ts-rest marks the request with its contract route before the global middleware runs.
  const scopes = scopesOf(req.tsRestRoute?.path);
  const writing = req.method !== 'GET' && req.method !== 'HEAD';
  const granted = writing
    ? principal.scopes.has(scopes.write)
    : principal.scopes.has(scopes.read) || principal.scopes.has(scopes.write);
  if (granted) return;
  const scope = writing ? scopes.write : scopes.read;
  const description = `The access token lacks the ${scope} scope.`;
  throw new HttpError(403, description, challenge({ code: 'insufficient_scope', description, scope }));
};

/**
 * Bearer authentication (RFC 6750), decided before the body is read: a missing credential or
 * another scheme → 401 with a bare challenge, a malformed one → 400 `invalid_request`, a wrong token
 * → 401 `invalid_token`, a missing scope → 403 `insufficient_scope`, keys unavailable → 503.
 * An address with too many failures, or a token over its rate, gets 429 with Retry-After.
 */
export const bearerAuth = ({
  authenticate,
  perToken,
  failuresPerAddress,
  requireScopes = false,
}: BearerAuthOptions): RequestHandler => {
  const address = (req: Request) => req.socket.remoteAddress ?? 'unknown';
  const failed = (req: Request, error: HttpError): HttpError => {
    failuresPerAddress?.take(address(req));
    return error;
  };

  const authorize = async (req: Request): Promise<void> => {
    const wait = failuresPerAddress?.retryAfter(address(req)) ?? 0;
    if (wait > 0) throw tooMany(wait, 'Too many failed authentications from this address');
    let token: string;
    try {
      token = bearerToken(req);
    } catch (error) {
      throw failed(req, error as HttpError);
    }
    let principal: Principal | undefined;
    try {
      principal = await authenticate(token);
    } catch (error) {
      if (!(error instanceof AuthUnavailableError)) throw error;
      throw new HttpError(503, 'Access tokens cannot be verified right now; retry later.', { 'Retry-After': '5' });
    }
    if (principal === undefined) {
      const description = 'The access token is invalid.';
      throw failed(req, new HttpError(401, description, challenge({ code: 'invalid_token', description })));
    }
    const tokenWait = perToken?.take(principal.key) ?? 0;
    if (tokenWait > 0) throw tooMany(tokenWait, 'Too many requests with this token');
    if (requireScopes) checkScope(req, principal);
  };

  // Express 4 does not catch a middleware's rejected promise: it travels with next().
  return (req, _res, next) => {
    authorize(req).then(() => next(), next);
  };
};
