import { describe, expect, it } from 'vitest';
import { readJsonBody } from './request-body.ts';

const post = (body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) =>
  new Request('https://plants.test/plants', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: { status: number; message: string }) => ({ status: error.status, message: error.message }),
  );

const gzip = async (text: string): Promise<Uint8Array<ArrayBuffer>> =>
  new Uint8Array(
    await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer(),
  );

describe('readJsonBody', () => {
  it('names where invalid JSON fails, every digit of the position, and only that', async () => {
    expect(await refusal(readJsonBody(post('{"name": "Fern", x}')))).toStrictEqual({
      status: 400,
      message: 'The request body is not valid JSON (error at position 17).',
    });
    // The engine names no position when the text ends early.
    expect(await refusal(readJsonBody(post('{"name":')))).toStrictEqual({
      status: 400,
      message: 'The request body is not valid JSON.',
    });
  });

  it('refuses as missing a compressed body that decodes to nothing', async () => {
    expect(await refusal(readJsonBody(post(await gzip(''), { 'content-encoding': 'gzip' })))).toStrictEqual({
      status: 400,
      message: 'A JSON request body is required.',
    });
  });

  it('reads a gzip body, and no body as undefined only when the body is optional', async () => {
    expect(await readJsonBody(post(await gzip('{"id":1}'), { 'content-encoding': 'GZIP' }))).toStrictEqual({ id: 1 });
    expect(await readJsonBody(new Request('https://plants.test/x', { method: 'POST' }), 100, true)).toBeUndefined();
    expect(await refusal(readJsonBody(new Request('https://plants.test/x', { method: 'POST' })))).toStrictEqual({
      status: 400,
      message: 'A JSON request body is required.',
    });
  });
});
