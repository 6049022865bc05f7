import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { expectError } from '../testing/expect-error.ts';
import { fakeStore } from '../testing/fake-store.ts';
import { staticTokens } from './authenticator.ts';
import { hashToken } from './token-hash.ts';

const FLOOD = 'flooding-token-0123456789';
const CALM = 'calm-token-0123456789abc';

let server: Server | undefined;
afterEach(
  () =>
    new Promise<void>((resolve) => {
      server?.closeAllConnections();
      server ? server.close(() => resolve()) : resolve();
    }),
);

const start = async (limits: { rateLimitPerToken?: number; authFailuresPerMinute?: number }) => {
  const app = createApp({
    store: fakeStore(),
    authenticate: staticTokens([hashToken(FLOOD), hashToken(CALM)]),
    ...limits,
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return (token: string) =>
    fetch(`${base}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{"id":1,"name":"Fern"}',
    });
};

describe('rate limiting', () => {
  it("limits each token on its own: one token's flood gets 429 while another is served", async () => {
    const send = await start({ rateLimitPerToken: 5 });
    const flood = await Promise.all(Array.from({ length: 40 }, () => send(FLOOD)));
    const calm = await Promise.all(Array.from({ length: 8 }, () => send(CALM)));
    const statuses = flood.map((response) => response.status);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(10);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    expect(calm.map((response) => response.status)).toEqual(Array(8).fill(200));
    const limited = flood.find((response) => response.status === 429) as Response;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(limited, 429, /Too many requests with this token; retry after \d+ s\./);
  });

  it('blocks an address after repeated failed authentication, even for a valid token, with Retry-After', async () => {
    const send = await start({ authFailuresPerMinute: 3 });
    for (let attempt = 0; attempt < 3; attempt += 1) await expectError(await send('wrong-token-0123456789'), 401);
    const blocked = await send(FLOOD);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expectError(blocked, 429, /failed authentications/);
  });

  it('turns limits off with 0', async () => {
    const send = await start({ rateLimitPerToken: 0, authFailuresPerMinute: 0 });
    for (let attempt = 0; attempt < 5; attempt += 1) await expectError(await send('wrong-token-0123456789'), 401);
    const responses = await Promise.all(Array.from({ length: 50 }, () => send(FLOOD)));
    expect(responses.every((response) => response.status === 200)).toBe(true);
  });
});
