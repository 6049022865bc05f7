// How the service reads `Authorization: Bearer <token>` (RFC 6750), shared with the client's fake
// so that both refuse the same headers with the same status and sentence.

/** RFC 6750 §2.1 b64token. */
const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * Why an Authorization header is refused: 401 when there is none or it names another scheme (the
 * answer challenges with the realm alone), 400 when it is malformed (an `invalid_request` challenge).
 */
export type BearerRefusal = { status: 400 | 401; message: string };

/** The token of a well-formed `Bearer <token>` header (undefined: none was sent), or its refusal. */
export const readBearerToken = (header: string | undefined): { token: string } | { refusal: BearerRefusal } => {
  if (header === undefined || header.trim() === '') {
    return { refusal: { status: 401, message: 'Authentication is required: send Authorization: Bearer <token>.' } };
  }
  const [scheme = '', ...rest] = header.trim().split(/\s+/);
  // Auth schemes are case-insensitive (RFC 9110 §11.1).
  if (scheme.toLowerCase() !== 'bearer') {
    return { refusal: { status: 401, message: 'Unsupported authorization scheme: use Bearer.' } };
  }
  const [token] = rest;
  if (rest.length !== 1 || token === undefined || !B64_TOKEN.test(token)) {
    return { refusal: { status: 400, message: 'The Authorization header must be Bearer followed by one token.' } };
  }
  return { token };
};
