import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import { errorHandler } from './error-handler.ts';
import { BODY_LIMIT_BYTES } from './json-body.ts';

/**
 * The answers of the error middleware: each failure Express, body-parser, ts-rest or the store
 * reports leaves as the contract's Error with its own sentence, and what is unexpected is logged.
 */

type LogLine = { level: number; msg: string; reqId?: string; err?: { message: string } };

/** A logger whose lines the test reads. */
const capturingLogger = () => {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.cleanup();
});

const call = (path: string, init: RequestInit = {}, url = server.url) =>
  fetch(`${url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${TEST_TOKEN}`, ...(init.headers as Record<string, string>) },
  });

const postJson = (body: NonNullable<RequestInit['body']>, headers: Record<string, string> = {}, url = server.url) =>
  call('/plants', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }, url);

describe('body-parser failures', () => {
  it('names the limit when a body is too large', async () => {
    const name = 'x'.repeat(BODY_LIMIT_BYTES);
    const message = await expectError(await postJson(JSON.stringify({ id: 1, name })), 413);
    expect(message).toBe(`The request body exceeds the limit of ${BODY_LIMIT_BYTES} bytes.`);
  });

  it('gives the position of invalid JSON, and no more of the parser message', async () => {
    const message = await expectError(await postJson('{"id": 1, "name": "Fern",}'), 400);
    expect(message).toBe('The request body is not valid JSON (error at position 25).');
  });

  it('says only that the JSON is invalid when the parser names no position', async () => {
    const message = await expectError(await postJson('nonsense'), 400);
    expect(message).toBe('The request body is not valid JSON.');
  });

  it('names the encodings it reads when a Content-Encoding is not one of them', async () => {
    const message = await expectError(await postJson('{}', { 'content-encoding': 'br' }), 415);
    expect(message).toBe('Unsupported Content-Encoding: send the body as identity, gzip or deflate.');
  });

  it('answers a corrupt gzip body with 400 naming the encoding', async () => {
    const corrupt = gzipSync('{"id":1,"name":"Fern"}').subarray(0, 12);
    const message = await expectError(await postJson(corrupt, { 'content-encoding': 'gzip' }), 400);
    expect(message).toBe('The request body is not valid gzip/deflate data for its Content-Encoding.');
  });
});

describe('request validation', () => {
  it('names the path parameters when they are invalid', async () => {
    const message = await expectError(await call('/plants/not-a-number'), 400);
    expect(message).toMatch(/^Invalid path parameters: id /);
  });

  it('names the query parameters when they are invalid', async () => {
    const message = await expectError(await call('/plants?limit=many'), 400);
    expect(message).toMatch(/^Invalid query parameters: limit /);
  });

  it('quotes a path segment that is not valid percent-encoding', async () => {
    const message = await expectError(await call('/plants/%zz'), 400);
    expect(message).toBe('The path segment "%zz" is not valid percent-encoding.');
  });

  it('quotes at most 40 characters of a long path segment that is not valid percent-encoding', async () => {
    const segment = `%zz${'a'.repeat(60)}`;
    const message = await expectError(await call(`/plants/${segment}`), 400);
    expect(message).toBe(`The path segment ${JSON.stringify(segment.slice(0, 40))} is not valid percent-encoding.`);
  });
});

describe('paths and methods', () => {
  it('answers a path no operation has with 404', async () => {
    const message = await expectError(await call('/gardens'), 404);
    expect(message).toBe('No operation exists at this path.');
  });

  it('answers a method a path does not support with 405 and Allow', async () => {
    const response = await call('/plants', { method: 'PUT' });
    expect(response.headers.get('allow')).toBe('POST, GET, HEAD, OPTIONS');
    expect(await expectError(response, 405)).toBe('PUT is not allowed here; allowed: POST, GET, HEAD, OPTIONS.');
  });

  it('answers OPTIONS with 204, Allow and no body', async () => {
    const response = await call('/plants', { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe('POST, GET, HEAD, OPTIONS');
    expect(await response.text()).toBe('');
  });
});

describe('store failures', () => {
  it('answers 503 with Retry-After while the store is unavailable, and logs a warning', async () => {
    const { logger, lines } = capturingLogger();
    const closed = await startTestServer(undefined, { logger });
    await closed.store.close();
    try {
      const response = await postJson(JSON.stringify({ id: 2, name: 'Fern' }), {}, closed.url);
      expect(response.headers.get('retry-after')).toBe('1');
      const message = await expectError(response, 503);
      expect(message).toBe('The plant store is temporarily unavailable; retry later.');
      const requestId = response.headers.get('x-request-id');
      expect(lines).toContainEqual(
        expect.objectContaining({ level: 40, msg: 'store unavailable', reqId: requestId, err: expect.anything() }),
      );
    } finally {
      await closed.cleanup();
    }
  });

  it('answers an unexpected failure with 500 and a generic sentence, and logs it as an error', async () => {
    const { logger, lines } = capturingLogger();
    const failing = await startTestServer(undefined, { logger });
    // The real store, but for a create that fails as nothing expected it to.
    failing.store.create = async () => {
      throw new Error('the disk said no');
    };
    try {
      const response = await postJson(JSON.stringify({ id: 3, name: 'Fern' }), {}, failing.url);
      expect(await expectError(response, 500)).toBe('Internal server error.');
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'unexpected error',
          reqId: response.headers.get('x-request-id'),
          err: expect.objectContaining({ message: 'the disk said no' }),
        }),
      );
    } finally {
      await failing.cleanup();
    }
  });
});

describe('a failure after the answer started', () => {
  // No contract route streams its answer, so a bare app with the handler stands in for one that would.
  it('cuts the connection instead of answering twice, and logs the error', async () => {
    const { logger, lines } = capturingLogger();
    const app = express();
    app.get('/stream', (_req, res, next) => {
      res.status(200).type('text/plain').write('the first half');
      next(new Error('the second half failed'));
    });
    app.use(errorHandler(logger));
    const server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/stream`;
      // The answer never completes: the client sees it cut, never an error answer appended to it.
      await expect(fetch(url).then((response) => response.text())).rejects.toThrow();
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 50,
          msg: 'error after the response started',
          err: expect.objectContaining({ message: 'the second half failed' }),
        }),
      );
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
