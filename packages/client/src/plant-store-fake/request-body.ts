import { jsonContentTypeProblem, jsonShapeProblem, parseExactJson } from '@org/plant-contract';
import { Refusal } from './answers.ts';

/** The service's request body limit (BODY_LIMIT_BYTES), in bytes after any gzip/deflate decoding. */
export const BODY_LIMIT_BYTES = 16 * 1024;
const REQUIRED = 'A JSON request body is required.';

const decoded = (bytes: Uint8Array<ArrayBuffer>, encoding: string): ReadableStream<Uint8Array> => {
  const raw = new Blob([bytes]).stream();
  if (encoding === 'identity') return raw;
  if (encoding === 'gzip' || encoding === 'deflate') return raw.pipeThrough(new DecompressionStream(encoding));
  throw new Refusal(415, 'Unsupported Content-Encoding: send the body as identity, gzip or deflate.');
};

/** The decoded bytes, refused with 413 past `limit` as the service refuses them. */
const readAtMost = async (stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> => {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.byteLength;
      if (length > limit) {
        await reader.cancel().catch(() => {});
        throw new Refusal(413, `The request body exceeds the limit of ${limit} bytes.`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof Refusal) throw error;
    throw new Refusal(400, 'The request body is not valid gzip/deflate data for its Content-Encoding.');
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
};

const parseJson = (text: string): unknown => {
  try {
    return parseExactJson(text);
  } catch (error) {
    // The engine's message quotes the input; only the position is passed back, as the service does.
    const position = /at position (\d+)/.exec((error as Error).message)?.[1];
    throw new Refusal(400, `The request body is not valid JSON${position ? ` (error at position ${position})` : ''}.`);
  }
};

/**
 * The request's JSON body with exact integers, read as the service reads it: no body → 400, a media
 * type other than JSON or a charset other than UTF-8 → 415, an unknown Content-Encoding → 415, more
 * than `limit` decoded bytes → 413, bad compressed data, invalid UTF-8, invalid JSON, a key twice or
 * nesting too deep → 400. With `optional`, no body is read as undefined.
 */
export const readJsonBody = async (request: Request, limit = BODY_LIMIT_BYTES, optional = false): Promise<unknown> => {
  const raw = new Uint8Array(await request.arrayBuffer());
  // A route whose body may be left out reads none as none.
  if (raw.byteLength === 0 && optional) return undefined;
  if (raw.byteLength === 0) throw new Refusal(400, REQUIRED);
  const refused = jsonContentTypeProblem(request.headers.get('content-type') ?? undefined);
  if (refused) throw new Refusal(415, refused);
  const encoding = (request.headers.get('content-encoding') ?? 'identity').toLowerCase();
  const bytes = await readAtMost(decoded(raw, encoding), limit);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Refusal(400, 'The request body is not valid UTF-8.');
  }
  // body-parser reads a body of no bytes as {}, which the service then refuses as missing.
  if (text === '') throw new Refusal(400, REQUIRED);
  const body = parseJson(text);
  const problem = jsonShapeProblem(text);
  if (problem) throw new Refusal(400, problem);
  return body;
};
