import { type RouteMetadata, readBearerToken, type Scope, WEBHOOKS_ADMIN_SCOPE } from '@org/plant-contract';
import type { AppRoute } from '@ts-rest/core';
import type { Request, RequestHandler, Response } from 'express';
import { HttpError } from '../http/http-error.ts';
import { type Authenticator, AuthUnavailableError, type Principal } from './authenticator.ts';
import type { RateLimiter } from './rate-limiter.ts';

export const REALM = 'plant-store';

const challenge = (error?: { code: string; description: string; scope?: string }): Record<string, string> => ({
  'WWW-Authenticate': error
    ? `Bearer realm="${REALM}", error="${error.code}", error_description="${error.description}"${
        error.scope ? `, scope="${error.scope}"` : ''
      }`
    : `Bearer realm="${REALM}"`,
});

export type BearerAuthOptions = {
  authenticate: Authenticator;
  /** Requests per principal (all its tokens together); undefined for no limit. */
  perToken?: RateLimiter;
  /** Failed authentications per client address; undefined for no limit. */
  failuresPerAddress?: RateLimiter;
  /**
   * Whether JWTs must carry the scope each contract route declares in its metadata. Named static
   * tokens always must; the operator's never.
   */
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
  const read = readBearerToken(req.headers.authorization);
  if (typeof read === 'string') return read;
  const { status, message: description } = read;
  throw new HttpError(
    status,
    description,
    challenge(status === 400 ? { code: 'invalid_request', description } : undefined),
  );
};

/** What bearerAuth leaves in Express's per-response locals for the handlers. */
type AuthLocals = { principal?: Principal };

/**
 * The key a request's client is known by in per-client limits: its principal's (Principal.key, as
 * the rate limit per principal counts) once authenticated, else its address.
 */
export const clientKey = (req: Pick<Request, 'ip'>, res: Response): string =>
  (res.locals as AuthLocals).principal?.key ?? `address:${req.ip ?? 'unknown'}`;

/** The principal bearerAuth authenticated the request as; a route behind it always has one. */
export const principalOf = (res: Response): Principal => {
  const { principal } = res.locals as AuthLocals;
  if (principal === undefined) throw new Error('The request was not authenticated.');
  return principal;
};

type RoutedRequest = Request & { tsRestRoute?: AppRoute };

/** The `:write` scope of a `:read` scope's resource, which grants it too. */
const writeScopeOf = (scope: Scope): string | undefined =>
  scope.endsWith(':read') ? `${scope.slice(0, -':read'.length)}:write` : undefined;

/** The scope that grants `scope` on every principal's resources too: webhooks:admin for the webhook routes. */
const adminScopeOf = (scope: Scope): string | undefined =>
  scope.startsWith('webhooks:') ? WEBHOOKS_ADMIN_SCOPE : undefined;

const checkScope = (req: RoutedRequest, principal: Principal, requireScopes: boolean): void => {
  if (principal.scopes === undefined || !(requireScopes || principal.scopesAlwaysApply)) return;
  // ts-rest marks the request with its contract route before the global middleware runs; each route
  // declares its scope (a test of the contract proves it), so a route without one is a bug: 500.
  const scope = (req.tsRestRoute?.metadata as Partial<RouteMetadata> | undefined)?.scope;
  if (scope === undefined) throw new Error(`The route ${req.method} ${req.tsRestRoute?.path} declares no scope.`);
  const writeScope = writeScopeOf(scope);
  const adminScope = adminScopeOf(scope);
  if (
    principal.scopes.has(scope) ||
    (writeScope !== undefined && principal.scopes.has(writeScope)) ||
    (adminScope !== undefined && principal.scopes.has(adminScope))
  ) {
    return;
  }
  const description = `The access token lacks the ${scope} scope.`;
  throw new HttpError(403, description, challenge({ code: 'insufficient_scope', description, scope }));
};

/**
 * Bearer authentication (RFC 6750), decided before the body is read: a missing credential or
 * another scheme → 401 with a bare challenge, a malformed one → 400 `invalid_request`, a wrong token
 * → 401 `invalid_token`, a missing scope → 403 `insufficient_scope`, keys unavailable → 503.
 * A token over its rate gets 429 with Retry-After.
 *
 * Failures are limited per client address (`req.ip`, which Express derives under `trust proxy`):
 * once an address has spent its budget, its further failures get 429 with Retry-After instead of
 * 400/401, saying no more about the credential. Its valid tokens are still answered: behind a proxy
 * or a NAT, one client's mistakes must not lock out the others. Every credential is therefore still
 * checked, which costs a SHA-256 for a static token and one signature check for a JWT (jose
 * refetches the JWKS for an unknown key id at most every 30 s), so a refused guess costs no more
 * than an accepted request. Guessing is not what the limit stops: static tokens have at least 16
 * characters (a generated one 256 random bits) and JWTs need the issuer's key.
 */
export const bearerAuth = ({
  authenticate,
  perToken,
  failuresPerAddress,
  requireScopes = false,
}: BearerAuthOptions): RequestHandler => {
  /** The answer to a failed authentication: `error`, or 429 once the address is over its budget. */
  const failed = (req: Request, error: HttpError): HttpError => {
    const wait = failuresPerAddress?.take(req.ip ?? 'unknown') ?? 0;
    return wait > 0 ? tooMany(wait, 'Too many failed authentications from this address') : error;
  };

  const authorize = async (req: Request, res: Response): Promise<void> => {
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
    checkScope(req, principal, requireScopes);
    (res.locals as AuthLocals).principal = principal;
  };

  // Express 4 does not catch a middleware's rejected promise: it travels with next().
  return (req, res, next) => {
    authorize(req, res).then(() => next(), next);
  };
};
