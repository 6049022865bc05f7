import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import './request-fields.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** `X-Retry-Count` as @org/plant-client sends it: 0 on a first attempt, 1… on its retries. */
const RETRY_COUNT = /^\d{1,3}$/;
/** A token sent in the query string is refused, and must not be logged either. */
const TOKEN_IN_QUERY = /([?&]access_token=)[^&#]*/gi;

/**
 * One structured log line per answered request, with a request id that is reused from
 * `X-Request-Id` when the caller sent a sane one and echoed back. Failures are logged at `info`
 * (4xx), `warn` (aborted) and `error` (5xx); successes only at `debug`: metrics count and time them,
 * and a line per success was a tenth of the service's CPU at full load (profiled). Headers are not
 * logged: Authorization must never be. Hand-written rather than pino-http, which builds a child
 * logger and serializes the request for every request, logged or not (see the README's performance
 * section).
 */
export const requestLogger =
  (logger: Logger): RequestHandler =>
  (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.once('close', () => {
      const aborted = !res.writableFinished;
      const { statusCode } = res;
      const level = aborted ? 'warn' : statusCode >= 500 ? 'error' : statusCode >= 400 ? 'info' : 'debug';
      if (!logger.isLevelEnabled(level)) return;
      const url = req.originalUrl;
      const retry = req.headers['x-retry-count'];
      const line = {
        req: {
          id,
          method: req.method,
          url: url.includes('access_token') ? url.replace(TOKEN_IN_QUERY, '$1[redacted]') : url,
          // The client as `trust proxy` derives it, the same address the failure limit keys on.
          remoteAddress: req.ip,
          // Tells a client's retries from new requests (absent for callers that do not send it).
          retryCount: typeof retry === 'string' && RETRY_COUNT.test(retry) ? Number(retry) : undefined,
        },
        res: { statusCode },
        responseTime: Math.round(performance.now() - started),
      };
      logger[level](line, aborted ? 'request aborted' : 'request completed');
    });
    next();
  };
