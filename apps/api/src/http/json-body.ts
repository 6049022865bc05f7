import { isUtf8 } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import { hasOnlyExactNumbers, jsonContentTypeProblem, jsonShapeProblem, parseExactJson } from '@org/plant-contract';
import express, { type RequestHandler } from 'express';
import { HttpError } from './http-error.ts';

/** The largest accepted request body, in bytes after any gzip/deflate decoding. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const hasBody = (headers: IncomingHttpHeaders): boolean =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';

/** The sentence for JSON.parse's failure. */
const invalidJson = (error: unknown): HttpError => {
  // V8's message quotes the input; only the position is worth passing back.
  const position = /at position (\d+)/.exec((error as Error).message)?.[1];
  return new HttpError(400, `The request body is not valid JSON${position ? ` (error at position ${position})` : ''}.`);
};

/**
 * Reads a JSON request body into `req.body`, with exact int64 integers: a body with a number a
 * double may not hold is parsed again with exact integers (bigint beyond 2^53). body-parser reads
 * the bytes (`express.raw`: the size limit, gzip/deflate, aborted and short bodies, each failure
 * reaching the error handler); the text is decoded and parsed here once. `express.json()` would
 * decode it a second time with iconv-lite and parse the Content-Type again after ours, and its
 * `reviver` option (for the exact integers) makes `JSON.parse` several times slower (4.5% of the
 * service's CPU at full load, profiled). Refused: no body → 400, a media type other than JSON or a
 * charset other than UTF-8 → 415, invalid UTF-8 → 400 (never turned into U+FFFD), invalid JSON →
 * 400 with its position, a key twice or nesting too deep → 400. A leading byte-order mark is
 * dropped, as body-parser does.
 */
export const jsonBody = (limit = BODY_LIMIT_BYTES): RequestHandler[] => [
  (req, _res, next) => {
    if (!hasBody(req.headers)) throw new HttpError(400, 'A JSON request body is required.');
    const refused = jsonContentTypeProblem(req.headers['content-type']);
    if (refused) throw new HttpError(415, refused);
    next();
  },
  express.raw({ limit, inflate: true, type: () => true }),
  (req, _res, next) => {
    const bytes: Buffer = req.body;
    if (!isUtf8(bytes)) throw new HttpError(400, 'The request body is not valid UTF-8.');
    const decoded = bytes.toString('utf8');
    const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
    // A chunked body can still turn out empty.
    if (text.trim() === '') throw new HttpError(400, 'A JSON request body is required.');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      throw invalidJson(error);
    }
    const problem = jsonShapeProblem(text);
    if (problem) throw new HttpError(400, problem);
    req.body = hasOnlyExactNumbers(text) ? body : parseExactJson(text);
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
