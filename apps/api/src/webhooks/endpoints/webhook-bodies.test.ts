import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';

let server: TestServer;
let endpointId: string;
const RECEIVER = 'http://127.0.0.1:9/hook';

const send = (path: string, method: string, body: string | Buffer, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...headers },
    body,
  });

const endpoints = async () => (await server.store.webhooks.listEndpoints()).map(({ url }) => url);

beforeAll(async () => {
  server = await startTestServer(undefined, { allowPrivateWebhooks: true });
  const created = await send('/webhooks', 'POST', JSON.stringify({ url: RECEIVER }));
  expect(created.status).toBe(201);
  endpointId = ((await created.json()) as { id: string }).id;
});
afterAll(async () => {
  await server.cleanup();
});

/** A body of the route's shape, padded past 16 KiB in a field the route reads. */
const oversized = (path: string): string => {
  const padding = 'x'.repeat(16 * 1024);
  if (path.endsWith('/recover')) return JSON.stringify({ since: '2026-01-01T00:00:00Z', padding });
  return JSON.stringify({ url: RECEIVER, description: padding });
};

describe('webhook management bodies are bounded like plant bodies', () => {
  const routes = (): [string, string][] => [
    ['POST', '/webhooks'],
    ['PATCH', `/webhooks/${endpointId}`],
    ['POST', `/webhooks/${endpointId}/recover`],
  ];

  it('answers a body over 16 KiB with 413, and changes nothing', async () => {
    for (const [method, path] of routes()) {
      await expectError(await send(path, method, oversized(path)), 413, /16384 bytes|too large/);
    }
    expect(await endpoints()).toStrictEqual([RECEIVER]);
  });

  it('counts the limit after decompression: a small gzip body that inflates past it is 413', async () => {
    const bomb = gzipSync(oversized('/webhooks'));
    expect(bomb.length).toBeLessThan(1024);
    for (const [method, path] of routes()) {
      await expectError(await send(path, method, bomb, { 'content-encoding': 'gzip' }), 413, /16384 bytes|too large/);
    }
    expect(await endpoints()).toStrictEqual([RECEIVER]);
  });

  it('answers a body that is not JSON with 415 and bad JSON with 400', async () => {
    for (const [method, path] of routes()) {
      await expectError(await send(path, method, 'url=x', { 'content-type': 'text/plain' }), 415, /Content-Type/);
      await expectError(await send(path, method, '{"url":'), 400, /JSON/);
    }
    expect(await endpoints()).toStrictEqual([RECEIVER]);
  });
});
