import type { RequestHandler } from 'express';
import { HttpError } from '../http/http-error.ts';

export const REALM = 'plant-store';

/** RFC 6750 §2.1 b64token. */
const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

const challenge = (error?: { code: string; description: string }): Record<string, string> => ({
  'WWW-Authenticate': error
    ? `Bearer realm="${REALM}", error="${error.code}", error_description="${error.description}"`
    : `Bearer realm="${REALM}"`,
});

/**
 * Bearer authentication (RFC 6750) in front of the body: a missing credential or another scheme
 * → 401 with a bare challenge, a malformed one → 400 `invalid_request`, a wrong token → 401
 * `invalid_token`.
 */
export const bearerAuth =
  (verify: (token: string) => boolean): RequestHandler =>
  (req, _res, next) => {
    if (req.query.access_token !== undefined) {
      // RFC 6750 §2.3 allows it, but URLs end up in logs, histories and proxies: refuse it.
      const description = 'Send the token in the Authorization header, not in the query string.';
      throw new HttpError(400, description, challenge({ code: 'invalid_request', description }));
    }
    if ((req.headersDistinct.authorization?.length ?? 0) > 1) {
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
    if (!verify(token)) {
      const description = 'The access token is invalid.';
      throw new HttpError(401, description, challenge({ code: 'invalid_token', description }));
    }
    next();
  };
