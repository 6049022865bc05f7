import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../store/plant-store.ts';
import { HttpError, sendError } from './http-error.ts';
import './request-fields.ts';
import { writeHead } from './security-headers.ts';

/** Seconds a client should wait before retrying when the store is unavailable. */
const STORE_RETRY_AFTER_SECONDS = '1';

/** Every failure leaves as the contract's `Error` body; unexpected ones are logged and answered 500. */
export const errorHandler =
  (logger: Logger) =>
  (error: unknown, req: IncomingMessage, res: ServerResponse): void => {
    if (res.headersSent) {
      logger.error({ reqId: req.id, err: error }, 'error after the response started');
      res.destroy();
      return;
    }
    if (error instanceof HttpError) {
      sendError(res, error.status, error.message, error.headers);
    } else if (error instanceof StoreUnavailableError) {
      logger.warn({ reqId: req.id, err: error }, 'store unavailable');
      sendError(res, 503, 'The plant store is temporarily unavailable; retry later.', {
        'Retry-After': STORE_RETRY_AFTER_SECONDS,
      });
    } else {
      logger.error({ reqId: req.id, err: error }, 'unexpected error');
      sendError(res, 500, 'Internal server error.');
    }
  };

export const notFound = (res: ServerResponse): void => {
  sendError(res, 404, 'No operation exists at this path.');
};

/**
 * Answers a known path asked with a method it does not support: OPTIONS gets 204 with `Allow`,
 * anything else 405 with `Allow`.
 */
export const otherMethods = (supported: readonly string[]) => {
  const allow = [...supported, 'OPTIONS'].join(', ');
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method === 'OPTIONS') {
      writeHead(res, 204, ['Allow', allow]).end();
      return;
    }
    sendError(res, 405, `${req.method} is not allowed here; allowed: ${allow}.`, { Allow: allow });
  };
};
