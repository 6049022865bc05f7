import { stringifyExactJson } from '@org/plant-contract';

/** An answer before it becomes a Response: what the service's Express app would write. */
export type Answer = {
  status: number;
  headers?: Record<string, string>;
  /** Written as exact JSON (bigints digit for digit); undefined for no body. */
  body?: unknown;
};

/** A failure on its way to the service's `Error` body, thrown anywhere a request is handled. */
export class Refusal extends Error {
  override readonly name = 'Refusal';
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

export const errorAnswer = <Status extends number>(
  status: Status,
  message: string,
  headers: Record<string, string> = {},
): { status: Status; headers: Record<string, string>; body: { error: Status; message: string } } => ({
  status,
  headers,
  body: { error: status, message },
});

/**
 * The headers the service's security middleware (helmet, as configured there) and `Cache-Control`
 * put on every answer, successes and failures alike.
 */
const SERVICE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cache-control': 'no-store',
};

/** The answer as `fetch` would resolve it; HEAD keeps the headers and drops the body, as Express does. */
export const toResponse = (answer: Answer, requestId: string, method: string): Response => {
  const headers = new Headers({ ...SERVICE_HEADERS, 'x-request-id': requestId, ...answer.headers });
  if (answer.body === undefined) return new Response(null, { status: answer.status, headers });
  headers.set('content-type', 'application/json; charset=utf-8');
  const text = stringifyExactJson(answer.body);
  return new Response(method === 'HEAD' ? null : text, { status: answer.status, headers });
};
