/*
 * Every class carries a registered symbol (`Symbol.for`) set to true, and `isInstance` checks that
 * symbol rather than the prototype chain, so it holds even when two copies of this package are
 * loaded. The symbol names are part of the public contract: never rename them.
 */
const brand = (name: string): symbol => Symbol.for(`@org/plant-client/${name}`);

const hasBrand = (value: unknown, marker: symbol): boolean =>
  typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;

const CLIENT_ERROR = brand('PlantClientError');
const API_ERROR = brand('PlantApiError');
const CONNECTION_ERROR = brand('PlantConnectionError');
const TIMEOUT_ERROR = brand('PlantTimeoutError');
const ABORT_ERROR = brand('PlantAbortError');
const BAD_REQUEST = brand('BadRequestError');
const AUTHENTICATION = brand('AuthenticationError');
const PERMISSION_DENIED = brand('PermissionDeniedError');
const NOT_FOUND = brand('NotFoundError');
const CONFLICT = brand('ConflictError');
const PAYLOAD_TOO_LARGE = brand('PayloadTooLargeError');
const UNSUPPORTED_MEDIA_TYPE = brand('UnsupportedMediaTypeError');
const RATE_LIMIT = brand('RateLimitError');
const INTERNAL_SERVER = brand('InternalServerError');
const SERVICE_UNAVAILABLE = brand('ServiceUnavailableError');

/** Base of every error this client throws for a request (invalid arguments throw RangeError). */
export class PlantClientError extends Error {
  override name = 'PlantClientError';
  readonly [CLIENT_ERROR] = true;

  static isInstance(value: unknown): value is PlantClientError {
    return hasBrand(value, CLIENT_ERROR);
  }
}

export type PlantApiErrorInit = { status: number; code: number; message: string; headers: Headers };

/**
 * The API answered with an error status and (normally) the contract's `Error` body. Statuses with a
 * meaning of their own get a subclass (NotFoundError, ConflictError, …); `apiErrorFor` picks it.
 */
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

  constructor(init: PlantApiErrorInit) {
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

/** 400: the request is invalid; the message names the field. */
export class BadRequestError extends PlantApiError {
  override name = 'BadRequestError';
  readonly [BAD_REQUEST] = true;

  static override isInstance(value: unknown): value is BadRequestError {
    return hasBrand(value, BAD_REQUEST);
  }
}

/** 401: the token is missing or not accepted. */
export class AuthenticationError extends PlantApiError {
  override name = 'AuthenticationError';
  readonly [AUTHENTICATION] = true;

  static override isInstance(value: unknown): value is AuthenticationError {
    return hasBrand(value, AUTHENTICATION);
  }
}

/** 403: the token is valid but may not do this. */
export class PermissionDeniedError extends PlantApiError {
  override name = 'PermissionDeniedError';
  readonly [PERMISSION_DENIED] = true;

  static override isInstance(value: unknown): value is PermissionDeniedError {
    return hasBrand(value, PERMISSION_DENIED);
  }
}

/** 404: no plant under that id (or no operation at that URL: check `baseUrl`). */
export class NotFoundError extends PlantApiError {
  override name = 'NotFoundError';
  readonly [NOT_FOUND] = true;

  static override isInstance(value: unknown): value is NotFoundError {
    return hasBrand(value, NOT_FOUND);
  }
}

/** 409: the id is already stored with different data. */
export class ConflictError extends PlantApiError {
  override name = 'ConflictError';
  readonly [CONFLICT] = true;

  static override isInstance(value: unknown): value is ConflictError {
    return hasBrand(value, CONFLICT);
  }
}

/** 413: the body is over the API's size limit. */
export class PayloadTooLargeError extends PlantApiError {
  override name = 'PayloadTooLargeError';
  readonly [PAYLOAD_TOO_LARGE] = true;

  static override isInstance(value: unknown): value is PayloadTooLargeError {
    return hasBrand(value, PAYLOAD_TOO_LARGE);
  }
}

/** 415: the body was not sent as UTF-8 JSON. */
export class UnsupportedMediaTypeError extends PlantApiError {
  override name = 'UnsupportedMediaTypeError';
  readonly [UNSUPPORTED_MEDIA_TYPE] = true;

  static override isInstance(value: unknown): value is UnsupportedMediaTypeError {
    return hasBrand(value, UNSUPPORTED_MEDIA_TYPE);
  }
}

/** 429: too many requests; thrown once the retries allowed are spent. */
export class RateLimitError extends PlantApiError {
  override name = 'RateLimitError';
  readonly [RATE_LIMIT] = true;

  static override isInstance(value: unknown): value is RateLimitError {
    return hasBrand(value, RATE_LIMIT);
  }
}

/** Any 5xx; thrown once the retries allowed are spent. */
export class InternalServerError extends PlantApiError {
  override name = 'InternalServerError';
  readonly [INTERNAL_SERVER] = true;

  static override isInstance(value: unknown): value is InternalServerError {
    return hasBrand(value, INTERNAL_SERVER);
  }
}

/** 503: storage (or token verification) is unavailable for now; also an InternalServerError. */
export class ServiceUnavailableError extends InternalServerError {
  override name = 'ServiceUnavailableError';
  readonly [SERVICE_UNAVAILABLE] = true;

  static override isInstance(value: unknown): value is ServiceUnavailableError {
    return hasBrand(value, SERVICE_UNAVAILABLE);
  }
}

const byStatus: Record<number, typeof PlantApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The error for an answer with this status: its own class where it has one, else PlantApiError. */
export const apiErrorFor = (init: PlantApiErrorInit): PlantApiError => {
  const ErrorClass = byStatus[init.status] ?? (init.status >= 500 ? InternalServerError : PlantApiError);
  return new ErrorClass(init);
};

/** The request never got an HTTP answer: refused, reset, DNS failure… */
export class PlantConnectionError extends PlantClientError {
  override name = 'PlantConnectionError';
  readonly [CONNECTION_ERROR] = true;

  static override isInstance(value: unknown): value is PlantConnectionError {
    return hasBrand(value, CONNECTION_ERROR);
  }
}

/** No answer arrived within `timeoutMs`, or the caller's `AbortSignal.timeout()` expired. */
export class PlantTimeoutError extends PlantClientError {
  override name = 'PlantTimeoutError';
  readonly [TIMEOUT_ERROR] = true;

  static override isInstance(value: unknown): value is PlantTimeoutError {
    return hasBrand(value, TIMEOUT_ERROR);
  }
}

/** The caller's signal aborted the request; `cause` is the signal's reason. */
export class PlantAbortError extends PlantClientError {
  override name = 'PlantAbortError';
  readonly [ABORT_ERROR] = true;

  static override isInstance(value: unknown): value is PlantAbortError {
    return hasBrand(value, ABORT_ERROR);
  }
}

const isTimeoutReason = (reason: unknown): boolean =>
  typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'TimeoutError';

/**
 * What a request rejects with once the caller's signal has aborted: a PlantTimeoutError when the
 * signal is a deadline (`AbortSignal.timeout()` aborts with a TimeoutError), else a PlantAbortError;
 * either way with the signal's reason as `cause`.
 */
export const abortErrorFor = (signal: AbortSignal): PlantClientError =>
  isTimeoutReason(signal.reason)
    ? new PlantTimeoutError("The request was aborted by its signal's deadline.", { cause: signal.reason })
    : new PlantAbortError('The request was aborted by its signal.', { cause: signal.reason });
