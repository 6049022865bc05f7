import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeStore } from '#test/fake-store';
import { type AppOptions, createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';

const TOKEN = 'log-test-token-0123456789';

const memoryStore = fakeStore();

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

const startLogged = async (level: 'debug' | 'info' = 'debug', trustProxy: AppOptions['trustProxy'] = false) => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const app = createApp({
    store: memoryStore,
    authenticate: staticTokens([{ hash: hashToken(TOKEN) }]),
    logger: pino({ level }, sink),
    trustProxy,
  });
  server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/plants`, lines };
};

const post = (url: string, headers: Record<string, string>) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ id: 1, name: 'Monstera' }),
  });

describe('request logging', () => {
  it("logs the client's X-Retry-Count, so that retries tell from new requests", async () => {
    const { url, lines } = await startLogged();
    await post(url, { authorization: `Bearer ${TOKEN}`, 'x-retry-count': '0' });
    await post(url, { authorization: `Bearer ${TOKEN}`, 'x-retry-count': '2' });
    await post(url, { authorization: `Bearer ${TOKEN}`, 'x-retry-count': 'many' });
    await post(url, { authorization: `Bearer ${TOKEN}` });
    const completed = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request completed');
    expect(completed.map((entry) => entry.req.retryCount)).toEqual([0, 2, undefined, undefined]);
  });

  it('logs one structured line per request with its request id, and never the Authorization header', async () => {
    const { url, lines } = await startLogged();
    const accepted = await post(url, { authorization: `Bearer ${TOKEN}` });
    const rejected = await post(url, { authorization: 'Bearer some-wrong-token-value' });
    expect([accepted.status, rejected.status]).toEqual([200, 401]);

    const entries = lines.map((line) => JSON.parse(line));
    const completed = entries.filter((entry) => entry.msg === 'request completed');
    expect(completed.map((entry) => entry.res.statusCode)).toEqual([200, 401]);
    expect(completed.map((entry) => entry.req.id)).toEqual([
      accepted.headers.get('x-request-id'),
      rejected.headers.get('x-request-id'),
    ]);
    const text = lines.join('\n');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('some-wrong-token-value');
    expect(text.toLowerCase()).not.toContain('authorization');
  });

  it.each([
    ['behind a trusted proxy, the address it forwards', ['loopback'], '203.0.113.7'],
    ['without trust proxy, the peer, whatever X-Forwarded-For says', false, '127.0.0.1'],
  ] as const)('logs the client address: %s', async (_label, trust, address) => {
    const { url, lines } = await startLogged('debug', trust === false ? false : [...trust]);
    await post(url, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.7' });
    await expect.poll(() => lines.length).toBeGreaterThan(0);
    expect(JSON.parse(lines.at(-1) as string).req.remoteAddress).toBe(address);
  });

  it('logs failures at info and leaves successes to debug, so that full load does not pay for a line each', async () => {
    const { url, lines } = await startLogged('info');
    const accepted = await post(url, { authorization: `Bearer ${TOKEN}` });
    const rejected = await post(url, { authorization: 'Bearer some-wrong-token-value' });
    expect([accepted.status, rejected.status]).toEqual([200, 401]);
    // The 401 is answered after the 200; its line arriving proves the 200 was not held back.
    await expect.poll(() => lines.length).toBeGreaterThan(0);
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.filter((entry) => entry.msg === 'request completed').map((entry) => entry.res.statusCode)).toEqual([
      401,
    ]);
  });

  it('redacts a token sent in the query string (which is refused) from the logged URL', async () => {
    const { url, lines } = await startLogged();
    const response = await post(`${url}?limit=1&access_token=leaked-token-value-123`, {});
    expect(response.status).toBe(400);
    const text = lines.join('\n');
    expect(text).not.toContain('leaked-token-value-123');
    expect(text).toContain('access_token=[redacted]');
  });

  it.each([
    ['Access_Token', 'Access_Token=[redacted]'],
    ['ACCESS_TOKEN', 'ACCESS_TOKEN=[redacted]'],
    ['access%5Ftoken', 'access%5Ftoken=[redacted]'],
    ['access%5ftoken', 'access%5ftoken=[redacted]'],
    ['%61ccess_token', '%61ccess_token=[redacted]'],
    ['Access%5FToken', 'Access%5FToken=[redacted]'],
  ])('redacts a token whose parameter name reads access_token once decoded, in any case: %s', async (name, shown) => {
    const { url, lines } = await startLogged();
    const response = await post(`${url}?limit=1&${name}=leaked-token-value-123&x=1`, {});
    expect(response.status).toBeGreaterThanOrEqual(400);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request completed');
    expect(logged.req.url).toBe(`/plants?limit=1&${shown}&x=1`);
  });

  it('cuts a long URL to 1 KiB in its log line, saying how much was cut', async () => {
    const { url, lines } = await startLogged();
    const path = `/plants/${'a'.repeat(15_000)}`;
    const response = await fetch(`${url.replace('/plants', '')}${path}`);
    expect(response.status).toBe(401);
    const logged = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request completed');
    expect(logged.req.url).toBe(`${path.slice(0, 1024)}…[${path.length - 1024} more characters cut]`);
    expect(lines.every((line) => line.length < 2_048)).toBe(true);
  });

  it('reuses a sane incoming X-Request-Id and replaces an unsafe one', async () => {
    const { url, lines } = await startLogged();
    const reused = await post(url, { authorization: `Bearer ${TOKEN}`, 'x-request-id': 'trace-42.a:b' });
    const replaced = await post(url, { authorization: `Bearer ${TOKEN}`, 'x-request-id': 'bad id\twith spaces' });
    expect(reused.headers.get('x-request-id')).toBe('trace-42.a:b');
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.join('\n')).not.toContain('with spaces');
  });
});
