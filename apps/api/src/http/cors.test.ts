import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type HttpAnswer, httpRequest } from '#test/http-request';
import { startTestServer, TEST_TOKEN, type TestAppOptions, type TestServer } from '#test/test-server';

const PAGE = 'http://127.0.0.1:5173';
const OTHER = 'https://elsewhere.example';
const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.cleanup()));
  servers = [];
});

const start = async (options: TestAppOptions = {}): Promise<TestServer> => {
  const server = await startTestServer(undefined, options);
  servers.push(server);
  return server;
};

const corsHeaderNames = (headers: IncomingHttpHeaders): string[] =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

/** A comma-separated header's values, lower-cased and sorted: their order means nothing. */
const list = (value: string | string[] | undefined): string[] =>
  String(value ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '')
    .sort();

const preflight = (server: TestServer, origin: string, headers: Record<string, string> = {}): Promise<HttpAnswer> =>
  httpRequest(`${server.url}/plants`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
      ...headers,
    },
  });

/** What an allowed origin must see on every answer, errors included, for the page to read it. */
const expectReadableBy = (answer: HttpAnswer, origin: string): void => {
  expect(answer.headers['access-control-allow-origin']).toBe(origin);
  expect(list(answer.headers.vary)).toContain('origin');
  expect(list(answer.headers['access-control-expose-headers'])).toEqual([
    'idempotent-replayed',
    'link',
    'retry-after',
    'www-authenticate',
    'x-request-id',
  ]);
};

const expectJsonError = (answer: HttpAnswer, status: number): void => {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.json()).toEqual({ error: status, message: expect.stringMatching(/^[A-Z]/) });
};

describe('CORS', () => {
  it('is off by default: no CORS headers at all, even for a preflight', async () => {
    const server = await start();
    const get = await httpRequest(`${server.url}/plants`, { headers: { ...AUTH, origin: PAGE } });
    expect(get.status).toBe(200);
    expect(corsHeaderNames(get.headers)).toEqual([]);
    const options = await preflight(server, PAGE);
    expect(corsHeaderNames(options.headers)).toEqual([]);
  });

  it('lets an allowed origin read answers and the headers the client uses', async () => {
    const server = await start({ corsOrigins: [OTHER, PAGE] });
    const created = await httpRequest(`${server.url}/plants`, {
      method: 'POST',
      headers: { ...AUTH, origin: PAGE },
      body: '{"id": 1, "name": "Fern"}',
    });
    expect(created.status).toBe(200);
    expectReadableBy(created, PAGE);
    const listed = await httpRequest(`${server.url}/plants?limit=1`, { headers: { ...AUTH, origin: PAGE } });
    expect(listed.status).toBe(200);
    expectReadableBy(listed, PAGE);
    // Credentials here are a bearer token, never cookies: the browser needs no Allow-Credentials.
    expect(listed.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('answers an allowed preflight 204 without a token, with the contract methods and a cache time', async () => {
    const server = await start({ corsOrigins: [PAGE] });
    for (const headers of [{}, AUTH]) {
      const answer = await preflight(server, PAGE, headers);
      expect(answer.status).toBe(204);
      expect(answer.headers['access-control-allow-origin']).toBe(PAGE);
      expect(list(answer.headers.vary)).toContain('origin');
      expect(list(answer.headers['access-control-allow-methods'])).toEqual(['delete', 'get', 'head', 'patch', 'post']);
      expect(list(answer.headers['access-control-allow-headers'])).toEqual([
        'authorization',
        'content-type',
        'idempotency-key',
        'x-retry-count',
      ]);
      expect(answer.headers['access-control-max-age']).toBe('600');
    }
  });

  it('gives other origins no CORS headers and refuses their preflight with 403', async () => {
    const server = await start({ corsOrigins: [PAGE] });
    const get = await httpRequest(`${server.url}/plants`, { headers: { ...AUTH, origin: OTHER } });
    expect(get.status).toBe(200);
    expect(corsHeaderNames(get.headers)).toEqual([]);
    const refused = await preflight(server, OTHER);
    expectJsonError(refused, 403);
    expect(refused.json()).toMatchObject({ message: expect.stringContaining(OTHER) });
    expect(corsHeaderNames(refused.headers)).toEqual([]);
    // A port is part of the origin.
    expectJsonError(await preflight(server, 'http://127.0.0.1:5174'), 403);
    // Without Origin (curl, servers) nothing changes.
    const plain = await httpRequest(`${server.url}/plants`, { headers: AUTH });
    expect(plain.status).toBe(200);
    expect(corsHeaderNames(plain.headers)).toEqual([]);
  });

  it('puts the CORS headers on errors too: 400, 401, 404, 409, 429 and an unknown path', async () => {
    const server = await start({ corsOrigins: [PAGE], authFailuresPerMinute: 2 });
    const other = 'other-token-0123456789abcdef';
    const unauthorized = await httpRequest(`${server.url}/plants`, { headers: { origin: PAGE } });
    expectJsonError(unauthorized, 401);
    expectReadableBy(unauthorized, PAGE);
    expect(unauthorized.headers['www-authenticate']).toMatch(/^Bearer/);
    const wrongToken = await httpRequest(`${server.url}/plants`, {
      headers: { origin: PAGE, authorization: `Bearer ${other}` },
    });
    expectJsonError(wrongToken, 401);
    expectReadableBy(wrongToken, PAGE);

    const post = (name: string) =>
      httpRequest(`${server.url}/plants`, {
        method: 'POST',
        headers: { ...AUTH, origin: PAGE },
        body: `{"id": 7, "name": "${name}"}`,
      });
    expect((await post('Fern')).status).toBe(200);
    // The same id with another plant: a retried create of the same plant would be 200.
    const conflict = await post('Moss');
    expectJsonError(conflict, 409);
    expectReadableBy(conflict, PAGE);
    // Two failed authentications a minute from this address are spent: the third gets 429 with
    // Retry-After, which the page may read.
    const limited = await httpRequest(`${server.url}/plants`, { headers: { origin: PAGE } });
    expectJsonError(limited, 429);
    expectReadableBy(limited, PAGE);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);

    for (const [path, status] of [
      ['/plants/99', 404],
      ['/plants/abc', 400],
      ['/nowhere', 404],
    ] as const) {
      const answer = await httpRequest(`${server.url}${path}`, { headers: { ...AUTH, origin: PAGE } });
      expectJsonError(answer, status);
      expectReadableBy(answer, PAGE);
    }
  });

  it('with *, answers every origin alike with Access-Control-Allow-Origin: *', async () => {
    const server = await start({ corsOrigins: '*' });
    const get = await httpRequest(`${server.url}/plants`, { headers: { ...AUTH, origin: OTHER } });
    expect(get.headers['access-control-allow-origin']).toBe('*');
    const answer = await preflight(server, PAGE);
    expect(answer.status).toBe(204);
    expect(answer.headers['access-control-allow-origin']).toBe('*');
  });
});
