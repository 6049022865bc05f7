const brand = (name: string): symbol => Symbol.for(`@org/plant-client/${name}`);

const hasBrand = (value: unknown, marker: symbol): boolean =>
  typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;

const CLIENT_ERROR = brand('PlantClientError');
const API_ERROR = brand('PlantApiError');
const CONNECTION_ERROR = brand('PlantConnectionError');
const TIMEOUT_ERROR = brand('PlantTimeoutError');

/**
 * Base of every error this client throws. `isInstance` checks a registered symbol rather than the
 * prototype chain, so it holds even when two copies of this package are loaded.
 */
export class PlantClientError extends Error {
  override name = 'PlantClientError';
  readonly [CLIENT_ERROR] = true;

  static isInstance(value: unknown): value is PlantClientError {
    return hasBrand(value, CLIENT_ERROR);
  }
}

/** The API answered with an error status and (normally) the contract's `Error` body. */
export class PlantApiError extends PlantClientError {
  override name = 'PlantApiError';
  readonly [API_ERROR] = true;
  /** HTTP status of the response. */
  readonly status: number;
  /** The `error` code of the body (the HTTP status, for this API). */
  readonly code: number;
  /** The response's `X-Request-Id`, to quote when reporting a problem. */
  readonly requestId: string | undefined;
  readonly headers: Headers;

  constructor(init: { status: number; code: number; message: string; headers: Headers }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.headers = init.headers;
    this.requestId = init.headers.get('x-request-id') ?? undefined;
  }

  static override isInstance(value: unknown): value is PlantApiError {
    return hasBrand(value, API_ERROR);
  }
}

/** The request never got an HTTP answer: refused, reset, DNS failure… */
export class PlantConnectionError extends PlantClientError {
  override name = 'PlantConnectionError';
  readonly [CONNECTION_ERROR] = true;

  static override isInstance(value: unknown): value is PlantConnectionError {
    return hasBrand(value, CONNECTION_ERROR);
  }
}

/** No answer arrived within `timeoutMs`. */
export class PlantTimeoutError extends PlantClientError {
  override name = 'PlantTimeoutError';
  readonly [TIMEOUT_ERROR] = true;

  static override isInstance(value: unknown): value is PlantTimeoutError {
    return hasBrand(value, TIMEOUT_ERROR);
  }
}
