import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import type { StoredPlant } from '../store/plant-store.ts';
import { fakeStore } from '../testing/fake-store.ts';
import { httpRequest } from '../testing/http-request.ts';
import { until } from '../testing/until.ts';

const TOKEN = 'answer-budget-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** An app whose store holds every list at a gate until the test opens it. */
const start = async (maxAnswerBytes: number) => {
  const gates: (() => void)[] = [];
  const plants: StoredPlant[] = [{ id: 1n, name: 'Monstera' }];
  const store = fakeStore({
    list: () => new Promise((resolve) => gates.push(() => resolve(plants))),
  });
  const app = createApp({ store, authenticate: staticTokens([hashToken(TOKEN)]), maxAnswerBytes });
  server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, gates };
};

describe('the budget of answers in flight (PLANT_MAX_ANSWER_BYTES)', () => {
  it('answers 503 with Retry-After to a list past the budget, and serves lists again once answers are sent', async () => {
    const { url, gates } = await start(1);
    // The first list always fits; it holds the budget until its answer is sent.
    const first = httpRequest(`${url}/plants?limit=1000`, { headers: auth });
    await until(
      async () => gates.length,
      (count) => count === 1,
    );

    const shed = await httpRequest(`${url}/plants`, { headers: auth });
    expect([shed.status, shed.headers['retry-after'], shed.json()]).toStrictEqual([
      503,
      '1',
      {
        error: 503,
        message:
          'The service is at its limit of large answers in flight (PLANT_MAX_ANSWER_BYTES); retry after the Retry-After delay, or with a smaller limit.',
      },
    ]);
    // Deliveries and endpoints are lists too, counted in the same budget.
    for (const path of ['/webhooks/ep_1/deliveries', '/webhooks']) {
      const list = await httpRequest(`${url}${path}`, { headers: auth });
      expect([list.status, list.headers['retry-after']]).toStrictEqual([503, '1']);
    }
    // Creates are not lists: the budget does not hold them.
    const created = await httpRequest(`${url}/plants`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ id: 2, name: 'Fern' }),
    });
    expect(created.status).toBe(200);

    gates.shift()?.();
    expect((await first).json()).toStrictEqual([{ id: 1, name: 'Monstera' }]);
    const again = httpRequest(`${url}/plants`, { headers: auth });
    await until(
      async () => gates.length,
      (count) => count === 1,
    );
    gates.shift()?.();
    expect((await again).status).toBe(200);
  });
});
