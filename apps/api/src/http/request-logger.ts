import { randomUUID } from 'node:crypto';
import querystring from 'node:querystring';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import './request-fields.ts';

const REQUEST_ID = /^[\w.:-]{1,128}$/;
/** `X-Retry-Count` as @org/plant-client sends it: 0 on a first attempt, 1… on its retries. */
const RETRY_COUNT = /^\d{1,3}$/;
/**
 * The longest URL a log line carries: a client may send 16 KiB of them without a token, and each
 * would be held in the log's buffer and written out. The rest is cut, with a marker saying so.
 */
export const LOGGED_URL_LENGTH = 1024;

/**
 * The query parameters whose name, decoded and in any case, is `access_token` (a token sent in the
 * query string is refused, and must not be logged either) with their values replaced.
 */
const redactTokens = (url: string): string => {
  const start = url.indexOf('?');
  if (start === -1) return url;
  let redacted = false;
  const parameters = url
    .slice(start + 1)
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      const name = equals === -1 ? parameter : parameter.slice(0, equals);
      // node:querystring's unescape: as the query parser decodes, and lenient with broken escapes.
      if (querystring.unescape(name.replaceAll('+', ' ')).toLowerCase() !== 'access_token') return parameter;
      redacted = true;
      return `${name}=[redacted]`;
    });
  return redacted ? `${url.slice(0, start + 1)}${parameters.join('&')}` : url;
};

/** The URL as logged: tokens redacted, then cut to LOGGED_URL_LENGTH. */
export const loggedUrl = (url: string): string => {
  const redacted = redactTokens(url);
  if (redacted.length <= LOGGED_URL_LENGTH) return redacted;
  return `${redacted.slice(0, LOGGED_URL_LENGTH)}…[${redacted.length - LOGGED_URL_LENGTH} more characters cut]`;
};

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
    // 'close' comes once per response; `on` spares the `once` wrapper's allocation and removal.
    res.on('close', () => {
      const aborted = !res.writableFinished;
      const { statusCode } = res;
      const level = aborted ? 'warn' : statusCode >= 500 ? 'error' : statusCode >= 400 ? 'info' : 'debug';
      if (!logger.isLevelEnabled(level)) return;
      const retry = req.headers['x-retry-count'];
      const line = {
        req: {
          id,
          method: req.method,
          url: loggedUrl(req.originalUrl),
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
