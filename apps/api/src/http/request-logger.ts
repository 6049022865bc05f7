import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** A token sent in the query string is refused, and must not be logged either. */
const TOKEN_IN_QUERY = /([?&]access_token=)[^&#]*/gi;

/**
 * One structured log line per request, with a request id that is reused from `X-Request-Id` when
 * the caller sent a sane one and echoed back. Headers are not logged: Authorization must never be.
 */
export const requestLogger = (logger: Logger): RequestHandler =>
  pinoHttp({
    logger,
    genReqId: (req, res) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url.replace(TOKEN_IN_QUERY, '$1[redacted]'),
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
  });
