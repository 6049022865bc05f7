import { validationMessage } from '@org/plant-contract';
import type { RequestValidationError } from '@ts-rest/express';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../store/plant-store.ts';
import { HttpError, sendError } from './http-error.ts';
import './request-fields.ts';

/** Seconds a client should wait before retrying when the store is unavailable. */
const STORE_RETRY_AFTER_SECONDS = '1';

/** What body-parser (and Express's parameter decoding) attach to the errors they pass on. */
type ExpressError = Error & { type?: string; status?: number; limit?: number; code?: string };

const bodyParserMessages: Record<string, (error: ExpressError) => string> = {
  'entity.too.large': (error) => `The request body exceeds the limit of ${error.limit} bytes.`,
  'encoding.unsupported': () => 'Unsupported Content-Encoding: send the body as identity, gzip or deflate.',
  'request.aborted': () => 'The request was aborted before its body was complete.',
  'request.size.invalid': () => 'The request body does not match its Content-Length.',
};

/** ts-rest's validation failure as one sentence: path parameters first, then the query, then the body. */
export const validationErrorHandler = (error: RequestValidationError, _req: Request, res: Response): void => {
  const message = error.pathParams
    ? validationMessage('path parameters', error.pathParams)
    : error.query
      ? validationMessage('query parameters', error.query)
      : error.headers
        ? validationMessage('headers', error.headers)
        : error.body
          ? validationMessage('request body', error.body)
          : 'Invalid request.';
  sendError(res, 400, message);
};

/** A known failure of Express or body-parser as the status and sentence to answer, or undefined. */
const describeExpressError = (error: ExpressError): { status: number; message: string } | undefined => {
  const describe = error.type === undefined ? undefined : bodyParserMessages[error.type];
  if (describe && error.status !== undefined) return { status: error.status, message: describe(error) };
  // body-parser passes zlib's failure on as a bare 400 when a gzip/deflate body is corrupt.
  if (error.status === 400 && error.code?.startsWith('Z_')) {
    return { status: 400, message: 'The request body is not valid gzip/deflate data for its Content-Encoding.' };
  }
  // Express's router, when a path parameter is not valid percent-encoding.
  const param = error.status === 400 ? /^Failed to decode param '(.*)'$/s.exec(error.message) : null;
  if (param) {
    return {
      status: 400,
      message: `The path segment ${JSON.stringify((param[1] ?? '').slice(0, 40))} is not valid percent-encoding.`,
    };
  }
  return undefined;
};

/** Every failure leaves as the contract's `Error` body; unexpected ones are logged and answered 500. */
export const errorHandler =
  (logger: Logger): ErrorRequestHandler =>
  (error: unknown, req, res, _next) => {
    if (res.headersSent) {
      logger.error({ reqId: req.id, err: error }, 'error after the response started');
      res.destroy();
      return;
    }
    if (error instanceof HttpError) return sendError(res, error.status, error.message, error.headers);
    if (error instanceof StoreUnavailableError) {
      logger.warn({ reqId: req.id, err: error }, 'store unavailable');
      return sendError(res, 503, 'The plant store is temporarily unavailable; retry later.', {
        'Retry-After': STORE_RETRY_AFTER_SECONDS,
      });
    }
    const known = describeExpressError(error as ExpressError);
    if (known) return sendError(res, known.status, known.message);
    logger.error({ reqId: req.id, err: error }, 'unexpected error');
    sendError(res, 500, 'Internal server error.');
  };

export const notFound: RequestHandler = (_req, res) => {
  sendError(res, 404, 'No operation exists at this path.');
};

/**
 * Answers a known path asked with a method it does not support: OPTIONS gets 204 with `Allow`,
 * anything else 405 with `Allow`. Express itself would answer OPTIONS 200 with a text body, and
 * other methods 404.
 */
export const otherMethods = (supported: readonly string[]): RequestHandler => {
  const allow = [...supported, 'OPTIONS'].join(', ');
  return (req, res) => {
    if (req.method === 'OPTIONS') {
      res.status(204).set('Allow', allow).end();
      return;
    }
    sendError(res, 405, `${req.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
  };
};
