/** An OpenAPI header object, or a reference to one. */
export type HeaderObject = { description?: string; required?: boolean; schema?: Record<string, unknown> };

/** Headers the service sends, as `components.headers`. */
export const HEADERS: Readonly<Record<string, HeaderObject>> = {
  'X-Request-Id': {
    description: 'The id of the request in the service log: a sane incoming `X-Request-Id` is reused.',
    schema: { type: 'string' },
  },
  'WWW-Authenticate': {
    description:
      'The Bearer challenge (RFC 6750): `Bearer realm="plant-store"`, with `error="invalid_token"` for a wrong ' +
      'token, `error="invalid_request"` for a malformed one and `error="insufficient_scope"` for a missing scope.',
    required: true,
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this answer is the stored first answer to a request with the same Idempotency-Key and body, replayed rather than run again; absent otherwise.',
    schema: { type: 'string', enum: ['true'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
};

type StatusDocs = {
  /** The response's description; the interface labels failures "unexpected error". */
  description: string;
  /** An example `message` of the Error body. */
  message: string;
  /** Names in HEADERS that the service always sends with this status. */
  headers?: readonly string[];
};

/** How each failure status is described; a status not listed here is an "unexpected error". */
export const ERROR_STATUSES: Readonly<Record<number, StatusDocs>> = {
  400: {
    description: 'unexpected error',
    message: 'Invalid request body: name is required.',
  },
  401: {
    description: 'unexpected error: no bearer token, or one the service does not accept',
    message: 'Authentication is required: send Authorization: Bearer <token>.',
    headers: ['WWW-Authenticate'],
  },
  403: {
    description: 'unexpected error: the token lacks the scope this operation needs',
    message: 'The access token lacks the scope plants:write.',
    headers: ['WWW-Authenticate'],
  },
  404: {
    description: 'unexpected error: no such plant, or no operation at this path',
    message: 'No plant has id 1.',
  },
  405: {
    description: 'unexpected error: the path does not support this method',
    message: 'PUT is not allowed here; allowed: POST, GET, HEAD, OPTIONS.',
  },
  408: {
    description: 'unexpected error: the request headers or body did not arrive in time; the connection is closed',
    message: 'The request took too long to arrive.',
  },
  409: {
    description: 'unexpected error: the id already holds a different plant; nothing was changed',
    message: 'A plant with id 1 already exists with different data.',
  },
  413: {
    description: 'unexpected error: the request body is too large',
    message: 'The request body exceeds the limit of 16384 bytes.',
  },
  415: {
    description: 'unexpected error: the body is not UTF-8 JSON, or its Content-Encoding is not gzip or deflate',
    message: 'Content-Type must be application/json (got "text/plain").',
  },
  429: {
    description: 'unexpected error: too many requests; retry after Retry-After seconds',
    message: 'Too many requests for this token; retry after 1 s.',
    headers: ['Retry-After'],
  },
  431: {
    description:
      'unexpected error: the request headers (over 16 KiB) or the request line are too large; the connection is closed',
    message: 'The request headers are too large.',
  },
  500: {
    description: 'unexpected error',
    message: 'Internal server error.',
  },
  503: {
    description: 'unexpected error: the store is temporarily unavailable; retry after Retry-After seconds',
    message: 'The plant store is temporarily unavailable; retry later.',
    headers: ['Retry-After'],
  },
};

export const errorStatusDocs = (status: number): StatusDocs =>
  ERROR_STATUSES[status] ?? { description: 'unexpected error', message: 'The request failed.' };
