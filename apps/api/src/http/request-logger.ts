import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import './request-fields.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** A token sent in the query string is refused, and must not be logged either. */
const TOKEN_IN_QUERY = /([?&]access_token=)[^&#]*/gi;

/**
 * One structured log line per request, with a request id that is reused from `X-Request-Id` when
 * the caller sent a sane one and echoed back. Headers are not logged: Authorization must never be.
 * Hand-written rather than pino-http: no child logger per request, which profiling showed to cost.
 */
export const requestLogger =
  (logger: Logger) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.once('close', () => {
      const url = req.url ?? '';
      const line = {
        req: {
          id,
          method: req.method,
          url: url.includes('access_token') ? url.replace(TOKEN_IN_QUERY, '$1[redacted]') : url,
        },
        res: { statusCode: res.statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      if (!res.writableFinished) logger.warn(line, 'request aborted');
      else if (res.statusCode >= 500) logger.error(line, 'request completed');
      else logger.info(line, 'request completed');
    });
  };
