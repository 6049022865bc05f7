import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeStore } from '#test/fake-store';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { StoreUnavailableError } from '../store/plant-store.ts';
import type { RequestStore } from '../store/request-store.ts';

const TOKEN = 'idempotency-unit-token-0123456789abcdef';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** Starts an app on `store`; resolves what a keyed POST /webhooks answers: status, Retry-After, body. */
const keyedCreate = async (store: ReturnType<typeof fakeStore>) => {
  const app = createApp({
    store,
    authenticate: staticTokens([{ hash: hashToken(TOKEN) }]),
    allowPrivateWebhooks: true,
  });
  server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  const answer = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'k' },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
  });
  return [answer.status, answer.headers.get('retry-after'), await answer.json()];
};

const unavailable = [503, '1', { error: 503, message: 'The plant store is temporarily unavailable; retry later.' }];

describe('Idempotency-Key and a store that fails', () => {
  it('answers 503 with Retry-After when the key cannot be claimed, and runs nothing', async () => {
    const createEndpoint = vi.fn(fakeStore().webhooks.createEndpoint);
    const store = fakeStore({
      requests: {
        ...fakeStore().requests,
        claimIdempotencyKey: async () => {
          throw new StoreUnavailableError('The database is unreachable.');
        },
      },
      webhooks: { ...fakeStore().webhooks, createEndpoint },
    });
    expect(await keyedCreate(store)).toStrictEqual(unavailable);
    expect(createEndpoint).not.toHaveBeenCalled();
  });

  it('answers 503 with Retry-After and releases the key, keeping nothing, when the store fails the request', async () => {
    const requests: RequestStore = {
      ...fakeStore().requests,
      finishIdempotencyKey: vi.fn(async () => {}),
      releaseIdempotencyKey: vi.fn(async () => {}),
    };
    const store = fakeStore({
      requests,
      webhooks: {
        ...fakeStore().webhooks,
        createEndpoint: async () => {
          throw new StoreUnavailableError('The database is unreachable.');
        },
      },
    });
    expect(await keyedCreate(store)).toStrictEqual(unavailable);
    expect(requests.releaseIdempotencyKey).toHaveBeenCalledOnce();
    expect(requests.finishIdempotencyKey).not.toHaveBeenCalled();
  });
});
