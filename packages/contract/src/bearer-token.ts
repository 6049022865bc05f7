// How the service reads `Authorization: Bearer <token>` (RFC 6750), shared with the client's fake
// so that both refuse the same headers with the same status and sentence.

/** RFC 6750 §2.1 b64token. */
const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Why an Authorization header is refused: 401 when there is none or it names another scheme (the
 * answer challenges with the realm alone), 400 when it is malformed (an `invalid_request` challenge).
 */
export type BearerRefusal = { status: 400 | 401; message: string };

/**
 * The token of a well-formed `Bearer <token>` header (undefined: none was sent), or its refusal.
 * The token comes back as it is, with nothing allocated: the service reads one on every request.
 */
export const readBearerToken = (header: string | undefined): string | BearerRefusal => {
  if (header === undefined || header.trim() === '') {
    return { status: 401, message: 'Authentication is required: send Authorization: Bearer <token>.' };
  }
  const [scheme = '', ...rest] = header.trim().split(/\s+/);
  // Auth schemes are case-insensitive (RFC 9110 §11.1).
  if (scheme.toLowerCase() !== 'bearer') {
    return { status: 401, message: 'Unsupported authorization scheme: use Bearer.' };
  }
  const [token] = rest;
  if (rest.length !== 1 || token === undefined || !B64_TOKEN.test(token)) {
    return { status: 400, message: 'The Authorization header must be Bearer followed by one token.' };
  }
  return token;
};
