import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { parseExactJson } from '@org/plant-contract';
import { HttpError } from './http-error.ts';
import { jsonShapeProblem } from './json-shape.ts';

/** The largest accepted request body, in bytes after any gzip/deflate decoding. */
export const BODY_LIMIT_BYTES = 16 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** `application/json` or a `+json` type, with no charset or UTF-8 (RFC 8259 allows nothing else). */
const checkContentType = (header: string | undefined): void => {
  if (header === 'application/json') return;
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

const tooLarge = (limit: number) => new HttpError(413, `The request body exceeds the limit of ${limit} bytes.`);

/** The body as sent, or decoded from gzip/deflate; anything else is refused before it is read. */
const decodedStream = (req: IncomingMessage, limit: number): Readable => {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') {
    // Refused from the header alone, before a byte of it is read.
    if (Number(req.headers['content-length'] ?? 0) > limit) throw tooLarge(limit);
    return req;
  }
  if (encoding !== 'gzip' && encoding !== 'deflate') {
    throw new HttpError(415, 'Unsupported Content-Encoding: send the body as identity, gzip or deflate.');
  }
  // Loaded on first use: almost every client sends plain JSON, and zlib costs start-up time and memory.
  const zlib = process.getBuiltinModule('node:zlib');
  const decoder = encoding === 'gzip' ? zlib.createGunzip() : zlib.createInflate();
  req.pipe(decoder);
  req.once('error', (error) => decoder.destroy(error));
  return decoder;
};

/**
 * The body's bytes, at most `limit` of them after decoding. Listens to events rather than
 * iterating the stream: a plant fits in one chunk, and iterators cost more than the chunk.
 */
const readBytes = (req: IncomingMessage, limit: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const stream = decodedStream(req, limit);
    const chunks: Buffer[] = [];
    let length = 0;
    const fail = (error: HttpError) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      req.off('close', onClose);
      if (stream !== req) stream.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) return fail(tooLarge(limit));
      chunks.push(chunk);
    };
    const onEnd = () => {
      req.off('close', onClose);
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length));
    };
    const onAborted = () => fail(new HttpError(400, 'The request was aborted before its body was complete.'));
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    const onError = (error: NodeJS.ErrnoException) => {
      if (stream !== req && error.code?.startsWith('Z_')) {
        return fail(new HttpError(400, 'The request body is not valid gzip/deflate data for its Content-Encoding.'));
      }
      onAborted();
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
    req.once('close', onClose);
  });

/**
 * Reads a JSON request body with exact int64 integers. Failures are clear `Error` answers: no body
 * or bad JSON → 400, wrong media type, charset or encoding → 415, too large → 413.
 */
export const readJsonBody = async (req: IncomingMessage, limit = BODY_LIMIT_BYTES): Promise<unknown> => {
  if (!hasBody(req.headers)) throw new HttpError(400, 'A JSON request body is required.');
  checkContentType(req.headers['content-type']);
  const bytes = await readBytes(req, limit);
  let text: string;
  try {
    text = utf8.decode(bytes);
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
  return body;
};
