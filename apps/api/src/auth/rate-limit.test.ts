import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { fakeStore } from '#test/fake-store';
import { type AppOptions, createApp } from '../app.ts';
import { staticTokens } from './authenticator.ts';
import { TEAM_SCOPES } from './token-entries.ts';
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

const WRONG = 'wrong-token-0123456789';

const start = async (options: Pick<AppOptions, 'rateLimitPerToken' | 'authFailuresPerMinute' | 'trustProxy'>) => {
  const app = createApp({
    store: fakeStore(),
    authenticate: staticTokens([
      { hash: hashToken(FLOOD), principal: { name: 'flood', scopes: TEAM_SCOPES } },
      { hash: hashToken(CALM), principal: { name: 'calm', scopes: TEAM_SCOPES } },
    ]),
    ...options,
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  /**
   * POST /plants with `token`; `forwardedFor` simulates a proxy on loopback: the X-Forwarded-For it
   * sends is what the client wrote (possibly a lie) followed by the address the proxy saw.
   */
  return (token: string | undefined, forwardedFor?: string) =>
    fetch(`${base}/plants`, {
      method: 'POST',
      headers: {
        ...(token !== undefined && { authorization: `Bearer ${token}` }),
        ...(forwardedFor !== undefined && { 'x-forwarded-for': forwardedFor }),
        'content-type': 'application/json',
      },
      body: '{"id":1,"name":"Fern"}',
    });
};

const expectTooManyFailures = async (response: Response) => {
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  // Nothing about the credential: neither the reason it failed nor a challenge to try another way.
  expect(response.headers.get('www-authenticate')).toBeNull();
  await expectError(response, 429, /^Too many failed authentications from this address; retry after \d+ s\.$/);
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

  it("limits an address's failed authentications with 429 and Retry-After, never its valid tokens", async () => {
    const send = await start({ authFailuresPerMinute: 3 });
    for (let attempt = 0; attempt < 3; attempt += 1) await expectError(await send(WRONG), 401);
    await expectTooManyFailures(await send(WRONG));
    // A missing or malformed credential is a failure as well.
    await expectTooManyFailures(await send(undefined));
    await expectTooManyFailures(await send('not a token'));
    expect((await send(FLOOD)).status).toBe(200);
    expect((await send(CALM)).status).toBe(200);
    await expectTooManyFailures(await send(WRONG));
  });

  it('keys failures on the client address that trusted proxies forward, and still serves its valid tokens', async () => {
    const send = await start({ authFailuresPerMinute: 3, trustProxy: ['loopback'] });
    const attacker = '203.0.113.7';
    for (let attempt = 0; attempt < 3; attempt += 1) await expectError(await send(WRONG, attacker), 401);
    await expectTooManyFailures(await send(WRONG, attacker));
    // A client cannot dodge the limit by writing X-Forwarded-For itself: the proxy appends the
    // address it saw, and only the proxy is trusted.
    await expectTooManyFailures(await send(WRONG, `198.51.100.99, ${attacker}`));
    expect((await send(FLOOD, attacker)).status).toBe(200);
    // Everyone else behind the same proxy keeps a budget of their own.
    await expectError(await send(WRONG, '198.51.100.2'), 401);
    expect((await send(CALM, '198.51.100.2')).status).toBe(200);
    expect((await send(CALM, '2001:db8::5')).status).toBe(200);
  });

  it.each([
    ['without trust proxy', undefined],
    ['when the peer is not a trusted proxy', ['10.0.0.0/8']],
  ])('ignores X-Forwarded-For %s: a client cannot choose its address to dodge the limit', async (_label, trust) => {
    const send = await start({ authFailuresPerMinute: 3, ...(trust && { trustProxy: trust }) });
    for (let attempt = 0; attempt < 3; attempt += 1) await expectError(await send(WRONG, `203.0.113.${attempt}`), 401);
    await expectTooManyFailures(await send(WRONG, '203.0.113.200'));
    expect((await send(FLOOD, '203.0.113.201')).status).toBe(200);
  });

  it('turns limits off with 0', async () => {
    const send = await start({ rateLimitPerToken: 0, authFailuresPerMinute: 0 });
    for (let attempt = 0; attempt < 5; attempt += 1) await expectError(await send(WRONG), 401);
    const responses = await Promise.all(Array.from({ length: 50 }, () => send(FLOOD)));
    expect(responses.every((response) => response.status === 200)).toBe(true);
  });
});
