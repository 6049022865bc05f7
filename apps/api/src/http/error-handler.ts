import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../store/plant-store.ts';
import { HttpError, sendError } from './http-error.ts';

/** Seconds a client should wait before retrying when the store is unavailable. */
const STORE_RETRY_AFTER_SECONDS = '1';

type BodyParserError = Error & { type?: string; status?: number; limit?: number; code?: string };

const bodyParserMessages: Record<string, (error: BodyParserError) => string> = {
  'entity.too.large': (error) => `The request body exceeds the limit of ${error.limit} bytes.`,
  'encoding.unsupported': () => 'Unsupported Content-Encoding: send the body as identity, gzip or deflate.',
  'request.aborted': () => 'The request was aborted before its body was complete.',
  'request.size.invalid': () => 'The request body does not match its Content-Length.',
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
    const bodyError = error as BodyParserError;
    const describe = bodyError.type === undefined ? undefined : bodyParserMessages[bodyError.type];
    if (describe && bodyError.status !== undefined) return sendError(res, bodyError.status, describe(bodyError));
    // body-parser passes zlib's failure on as a bare 400 when a gzip/deflate body is corrupt.
    if (bodyError.status === 400 && bodyError.code?.startsWith('Z_')) {
      return sendError(res, 400, 'The request body is not valid gzip/deflate data for its Content-Encoding.');
    }
    logger.error({ reqId: req.id, err: error }, 'unexpected error');
    sendError(res, 500, 'Internal server error.');
  };

export const notFound: RequestHandler = (_req, res) => {
  sendError(res, 404, 'No operation exists at this path.');
};

/**
 * Answers a known path asked with a method it does not support: OPTIONS gets 204 with `Allow`,
 * anything else 405 with `Allow`.
 */
export const otherMethods = (supported: readonly string[]): RequestHandler => {
  const allow = [...supported, 'OPTIONS'].join(', ');
  return (req, res) => {
    if (req.method === 'OPTIONS') {
      res.set('Allow', allow).status(204).end();
      return;
    }
    sendError(res, 405, `${req.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
  };
};
