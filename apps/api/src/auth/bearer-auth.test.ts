import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createPlantClient, PlantApiError } from '@org/plant-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { conformingFetch as fetch } from '#test/openapi-conformance';
import { makeDataDir, startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import { createApp } from '../app.ts';
import { BODY_LIMIT_BYTES } from '../http/json-body.ts';
import { SqlitePlantStore } from '../store/sqlite/sqlite-store.ts';
import { staticTokens } from './authenticator.ts';
import { REALM } from './bearer-auth.ts';
import { hashToken } from './token-hash.ts';

const BARE_CHALLENGE = `Bearer realm="${REALM}"`;
const VALID_BODY = '{"id":1,"name":"Monstera"}';

let server: TestServer;
beforeEach(async () => {
  server = await startTestServer();
});
afterEach(async () => {
  await server.cleanup();
});

/** POST /plants with exactly the given headers (no Authorization unless given). */
const post = (headers: Record<string, string>, body: string | Uint8Array<ArrayBuffer> = VALID_BODY) =>
  fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

/** Asserts the contract's Error answer and returns its message and WWW-Authenticate challenge. */
const expectError = async (response: Response, status: number) => {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  const text = await response.text();
  expect(text).not.toMatch(/<html|\n\s+at |\.[cm]?[jt]s:\d+|node_modules/i);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(status);
  expect(body.message).toEqual(expect.any(String));
  return { message: body.message as string, challenge: response.headers.get('www-authenticate') };
};

const expectNotStored = async () => {
  expect(await server.store.get(1n)).toBeUndefined();
};

describe('bearer authentication over HTTP', () => {
  it('answers a missing Authorization header with 401 and a bare Bearer challenge, storing nothing', async () => {
    const { message, challenge } = await expectError(await post({}), 401);
    expect(challenge).toBe(BARE_CHALLENGE);
    expect(message).toMatch(/Authorization: Bearer/);
    await expectNotStored();
  });

  it('answers an empty Authorization header like a missing one', async () => {
    const { challenge } = await expectError(await post({ authorization: '' }), 401);
    expect(challenge).toBe(BARE_CHALLENGE);
    await expectNotStored();
  });

  it('answers another scheme with 401 and a bare challenge naming Bearer', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', `Token ${TEST_TOKEN}`, TEST_TOKEN]) {
      const { message, challenge } = await expectError(await post({ authorization }), 401);
      expect(challenge).toBe(BARE_CHALLENGE);
      expect(message).toMatch(/scheme.*Bearer/);
    }
    await expectNotStored();
  });

  it('answers a wrong token with 401 invalid_token and never echoes it', async () => {
    const wrong = `${TEST_TOKEN.slice(0, -1)}X`;
    const response = await post({ authorization: `Bearer ${wrong}` });
    const headerText = [...response.headers].join('\n');
    const { message, challenge } = await expectError(response, 401);
    expect(challenge).toMatch(new RegExp(`^${BARE_CHALLENGE}, `));
    expect(challenge).toContain('error="invalid_token"');
    expect(message).toMatch(/token is invalid/);
    expect(message + headerText).not.toContain(wrong);
    await expectNotStored();
  });

  it('answers wrong tokens of other lengths exactly like one of the same length', async () => {
    const sameLength = await expectError(await post({ authorization: `Bearer ${'x'.repeat(TEST_TOKEN.length)}` }), 401);
    for (const wrong of ['x', `${TEST_TOKEN}x`, TEST_TOKEN.slice(0, -1), 'y'.repeat(4000)]) {
      expect(await expectError(await post({ authorization: `Bearer ${wrong}` }), 401)).toStrictEqual(sameLength);
    }
    await expectNotStored();
  });

  it('gives the client a PlantApiError 401 carrying the server message', async () => {
    const error = await createPlantClient({ baseUrl: server.url, token: 'not-the-token', fetch })
      .createPlant({ id: 1, name: 'Monstera' })
      .catch((e: unknown) => e);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect((error as PlantApiError).status).toBe(401);
    expect((error as PlantApiError).code).toBe(401);
    expect((error as PlantApiError).message).toBe('The access token is invalid.');
    expect((error as PlantApiError).headers.get('www-authenticate')).toContain('error="invalid_token"');
    await expectNotStored();
  });

  it('accepts the scheme in any case (RFC 9110 §11.1)', async () => {
    for (const [scheme, id] of [
      ['bearer', 1],
      ['BEARER', 2],
      ['bEaReR', 3],
    ] as const) {
      const response = await post({ authorization: `${scheme} ${TEST_TOKEN}` }, `{"id":${id},"name":"Cased"}`);
      expect(response.status).toBe(200);
      expect(await response.json()).toStrictEqual({ name: 'Cased' });
      expect(await server.store.get(BigInt(id))).toStrictEqual({ id: BigInt(id), name: 'Cased' });
    }
  });

  it.each([
    ['no token', 'Bearer'],
    ['two tokens', `Bearer ${TEST_TOKEN} ${TEST_TOKEN}`],
    ['a quote in the token', 'Bearer abc"def'],
    ['a comma in the token', `Bearer ${TEST_TOKEN},x`],
    ['padding in the middle', 'Bearer ab=cd'],
    ['a non-ASCII token', 'Bearer t\u00f6ken'],
  ])('answers Bearer with %s with 400 invalid_request', async (_label, authorization) => {
    const { message, challenge } = await expectError(await post({ authorization }), 400);
    expect(challenge).toMatch(new RegExp(`^${BARE_CHALLENGE}, `));
    expect(challenge).toContain('error="invalid_request"');
    expect(message).toMatch(/Authorization header/);
    await expectNotStored();
  });

  it('accepts b64token characters and trailing padding as a well-formed token (then 401, not 400)', async () => {
    const { challenge } = await expectError(await post({ authorization: 'Bearer aZ09-._~+/==' }), 401);
    expect(challenge).toContain('error="invalid_token"');
  });

  it('does not accept a token in the query string', async () => {
    const response = await fetch(`${server.url}/plants?access_token=${TEST_TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: VALID_BODY,
    });
    const { message, challenge } = await expectError(response, 400);
    expect(message).toMatch(/query string/);
    expect(challenge).toContain('error="invalid_request"');
    await expectNotStored();
  });

  it('refuses a token in the query string even beside a valid header', async () => {
    const response = await fetch(`${server.url}/plants?access_token=${TEST_TOKEN}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_TOKEN}` },
      body: VALID_BODY,
    });
    expect((await expectError(response, 400)).message).toMatch(/query string/);
    await expectNotStored();
  });

  it('refuses two Authorization headers, even when one is valid', async () => {
    const response = await rawRequest(
      [
        'POST /plants HTTP/1.1',
        `Authorization: Bearer ${TEST_TOKEN}`,
        'Authorization: Bearer another-token-0123456789',
        'Content-Type: application/json',
        `Content-Length: ${VALID_BODY.length}`,
      ],
      VALID_BODY,
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      error: 400,
      message: expect.stringMatching(/exactly one Authorization header/),
    });
    expect(response.headers['www-authenticate']).toContain('error="invalid_request"');
    await expectNotStored();
  });

  it('answers oversized headers with 431 and the Error body, never 500', async () => {
    const response = await rawRequest(
      [
        'POST /plants HTTP/1.1',
        `Authorization: Bearer ${'a'.repeat(20_000)}`,
        'Content-Type: application/json',
        `Content-Length: ${VALID_BODY.length}`,
      ],
      VALID_BODY,
    );
    expect(response.status).toBe(431);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toStrictEqual({ error: 431, message: 'The request headers are too large.' });
    await expectNotStored();
  });
});

/** Sends raw HTTP/1.1 (fetch cannot send duplicate or oversized headers) and parses the answer. */
const rawRequest = (head: string[], body: string) =>
  new Promise<{ status: number; headers: Record<string, string>; body: unknown }>((resolve, reject) => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.end(`${[...head, 'Host: 127.0.0.1', 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headText = '', bodyText = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = headText.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(bodyText) });
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('raw request timed out')));
  });

describe('authentication is decided before the body is read', () => {
  const cases: [label: string, headers: Record<string, string>, body: string | Uint8Array<ArrayBuffer>][] = [
    ['malformed JSON', {}, '{"id":1,'],
    ['a body over the limit', {}, JSON.stringify({ id: 1, name: 'x', pad: 'x'.repeat(BODY_LIMIT_BYTES * 4) })],
    ['text/plain', { 'content-type': 'text/plain' }, VALID_BODY],
    ['an invalid body', {}, '{"id":"one"}'],
    ['an unknown Content-Encoding', { 'content-encoding': 'br' }, VALID_BODY],
    ['a corrupt gzip body', { 'content-encoding': 'gzip' }, 'not gzip'],
    ['a gzip bomb', { 'content-encoding': 'gzip' }, new Uint8Array(gzipSync('x'.repeat(BODY_LIMIT_BYTES * 64)))],
  ];

  it.each(cases)('answers an unauthenticated request with %s with 401', async (_label, headers, body) => {
    const { challenge } = await expectError(await post(headers, body), 401);
    expect(challenge).toBe(BARE_CHALLENGE);
    await expectNotStored();
  });

  it.each(cases)('answers a wrong token with %s with 401 invalid_token', async (_label, headers, body) => {
    const { challenge } = await expectError(await post({ authorization: 'Bearer wrong', ...headers }, body), 401);
    expect(challenge).toContain('error="invalid_token"');
    await expectNotStored();
  });
});

describe('several configured tokens', () => {
  let app: Server;
  let store: SqlitePlantStore;
  let dataDir: string;
  let url: string;
  const first = 'first-token-aaaaaaaaaaaaaaaa';
  const second = 'second-token-bbbbbbbb';

  beforeEach(async () => {
    dataDir = makeDataDir();
    store = await SqlitePlantStore.open(dataDir);
    const listening = createServer(
      createApp({ store, authenticate: staticTokens([{ hash: hashToken(first) }, { hash: hashToken(second) }]) }),
    ).listen(0, '127.0.0.1');
    app = listening;
    await new Promise((resolve) => listening.once('listening', resolve));
    url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    app.closeAllConnections();
    await new Promise<void>((resolve) => app.close(() => resolve()));
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('accepts each of them, through the client', async () => {
    await expect(
      createPlantClient({ baseUrl: url, token: first, fetch }).createPlant({ id: 1, name: 'A' }),
    ).resolves.toEqual({
      name: 'A',
    });
    await expect(
      createPlantClient({ baseUrl: url, token: second, fetch }).createPlant({ id: 2, name: 'B' }),
    ).resolves.toEqual({ name: 'B' });
    expect(await store.get(1n)).toStrictEqual({ id: 1n, name: 'A' });
    expect(await store.get(2n)).toStrictEqual({ id: 2n, name: 'B' });
  });

  it('rejects any other token, including the test server token', async () => {
    for (const token of [TEST_TOKEN, `${first}${second}`, first.toUpperCase()]) {
      const error = await createPlantClient({ baseUrl: url, token, fetch })
        .createPlant({ id: 3, name: 'C' })
        .catch((e: unknown) => e);
      expect(PlantApiError.isInstance(error)).toBe(true);
      expect((error as PlantApiError).status).toBe(401);
    }
    expect(await store.get(3n)).toBeUndefined();
  });
});
