import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import { hasOnlyExactNumbers, jsonContentTypeProblem, jsonShapeProblem, parseExactJson } from '@org/plant-contract';
import express, { type RequestHandler } from 'express';
import { HttpError } from './http-error.ts';

/** The largest accepted request body, in bytes after any gzip/deflate decoding. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const hasBody = (headers: IncomingHttpHeaders): boolean =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';

/** The body's text, kept by `verify` for the checks that need the source. */
const sourceText = new WeakMap<object, string>();

/**
 * Reads a JSON request body into `req.body` with `express.json()`, with exact int64 integers: a body
 * with a number a double may not hold is parsed again with exact integers (bigint beyond 2^53).
 * body-parser's `reviver` option would do it for every body, and a reviver makes `JSON.parse`
 * several times slower (4.5% of the service's CPU at full load, profiled). What
 * body-parser lets through is refused first or after: no body → 400, a media type other than JSON
 * or a charset other than UTF-8 → 415 (body-parser would skip the body or transcode it), invalid
 * UTF-8 → 400 (body-parser would turn it into U+FFFD), a key twice or nesting too deep → 400.
 * body-parser's own failures (too large, bad JSON, bad encoding, aborted) reach the error handler.
 */
export const jsonBody = (limit = BODY_LIMIT_BYTES): RequestHandler[] => [
  (req, _res, next) => {
    if (!hasBody(req.headers)) throw new HttpError(400, 'A JSON request body is required.');
    const refused = jsonContentTypeProblem(req.headers['content-type']);
    if (refused) throw new HttpError(415, refused);
    next();
  },
  express.json({
    limit,
    inflate: true,
    // Any top-level value parses; the contract's schema then says what was expected.
    strict: false,
    type: () => true,
    verify: (req, _res, bytes) => {
      if (!isUtf8(bytes)) throw new HttpError(400, 'The request body is not valid UTF-8.');
      const text = bytes.toString('utf8');
      // body-parser decodes with iconv-lite, which drops a leading byte-order mark before
      // JSON.parse: the source kept for the exact re-parse must be that same text.
      sourceText.set(req, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    },
  }),
  (req, _res, next) => {
    const text = sourceText.get(req) ?? '';
    // A chunked body can still turn out empty, which body-parser reads as {}.
    if (text.trim() === '') throw new HttpError(400, 'A JSON request body is required.');
    const problem = jsonShapeProblem(text);
    if (problem) throw new HttpError(400, problem);
    if (!hasOnlyExactNumbers(text)) req.body = parseExactJson(text);
    next();
  },
];

/**
 * jsonBody for a route whose body may be left out: a request without one passes with no
 * `req.body`, and one with a body is read exactly as jsonBody reads it.
 */
export const optionalJsonBody = (limit = BODY_LIMIT_BYTES): RequestHandler[] =>
  jsonBody(limit).map(
    (handler): RequestHandler =>
      (req, res, next) => {
        if (hasBody(req.headers)) handler(req, res, next);
        else next();
      },
  );
