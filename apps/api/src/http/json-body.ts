import type { IncomingHttpHeaders } from 'node:http';
import { parseExactJson } from '@org/plant-contract';
import express, { type RequestHandler } from 'express';
import { HttpError } from './http-error.ts';
import { jsonShapeProblem } from './json-shape.ts';

/** The largest accepted request body, in bytes after any gzip/deflate decoding. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `application/json` or a `+json` type, with no charset or UTF-8 (RFC 8259 allows nothing else). */
const checkContentType = (header: string | undefined): void => {
  const [mediaType = '', ...parameters] = (header ?? '').split(';');
  const type = mediaType.trim().toLowerCase();
  if (type !== 'application/json' && !/^application\/[\w.+-]+\+json$/.test(type)) {
    const got = header === undefined ? 'none' : JSON.stringify(header.slice(0, 100));
    throw new HttpError(415, `Content-Type must be application/json (got ${got}).`);
  }
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    if (value.trim().replace(/^"|"$/g, '').toLowerCase() !== 'utf-8') {
      throw new HttpError(415, 'JSON bodies must be encoded as UTF-8.');
    }
  }
};

const hasBody = (headers: IncomingHttpHeaders): boolean =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] ?? '0') !== '0';

/**
 * Reads a JSON request body into `req.body` with exact int64 integers. Failures become clear
 * `Error` answers: no body or bad JSON → 400, wrong media type or charset → 415, too large → 413.
 */
export const jsonBody = (limit = BODY_LIMIT_BYTES): RequestHandler[] => [
  (req, _res, next) => {
    if (!hasBody(req.headers)) return next(new HttpError(400, 'A JSON request body is required.'));
    checkContentType(req.headers['content-type']);
    next();
  },
  express.raw({ type: () => true, limit }),
  (req, _res, next) => {
    let text: string;
    try {
      text = utf8.decode(req.body as Buffer);
    } catch {
      throw new HttpError(400, 'The request body is not valid UTF-8.');
    }
    let body: unknown;
    try {
      body = parseExactJson(text);
    } catch (error) {
      // V8's message quotes the input; only the position is worth passing back.
      const position = /at position (\d+)/.exec((error as SyntaxError).message)?.[1];
      throw new HttpError(
        400,
        `The request body is not valid JSON${position ? ` (error at position ${position})` : ''}.`,
      );
    }
    const problem = jsonShapeProblem(text);
    if (problem) throw new HttpError(400, problem);
    req.body = body;
    next();
  },
];
