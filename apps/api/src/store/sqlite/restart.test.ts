import { afterEach, describe, expect, it } from 'vitest';
import { httpRequest } from '#test/http-request';
import { manualClock } from '#test/manual-clock';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import { until } from '#test/until';
import { RESTART_DELAY_MS } from './database-thread.ts';
import type { SqlitePlantStore } from './sqlite-store.ts';

const auth = { authorization: `Bearer ${TEST_TOKEN}` };

let server: TestServer | undefined;
afterEach(async () => {
  await server?.cleanup();
  server = undefined;
});

const statusOf = async (url: string, init: Parameters<typeof httpRequest>[1] = {}) => {
  const answer = await httpRequest(url, init);
  return answer.status;
};

describe('the embedded store when its database thread dies', () => {
  it('answers 503 everywhere, /healthz included, while it restarts the thread, then serves what was committed', async () => {
    const clock = manualClock();
    server = await startTestServer(undefined, { storeClock: clock });
    const { url } = server;
    const create = (id: number, name: string) =>
      httpRequest(`${url}/plants`, { method: 'POST', headers: auth, body: JSON.stringify({ id, name }) });
    expect((await create(1, 'Monstera')).status).toBe(200);

    await (server.store as SqlitePlantStore).terminateWorkerForTesting();
    const down = await httpRequest(`${url}/plants`, { headers: auth });
    expect([down.status, down.headers['retry-after'], down.json()]).toStrictEqual([
      503,
      '1',
      { error: 503, message: 'The plant store is temporarily unavailable; retry later.' },
    ]);
    expect((await create(2, 'Fern')).status).toBe(503);
    expect(await statusOf(`${url}/readyz`)).toBe(503);
    const health = await httpRequest(`${url}/healthz`);
    expect([health.status, health.json()]).toStrictEqual([
      503,
      { error: 503, message: 'The plant store is down and restarting.' },
    ]);

    await clock.advance(RESTART_DELAY_MS);
    await until(
      () => statusOf(`${url}/healthz`),
      (status) => status === 200,
    );
    expect(await statusOf(`${url}/readyz`)).toBe(200);
    expect((await create(2, 'Fern')).status).toBe(200);
    const listed = await httpRequest(`${url}/plants`, { headers: auth });
    expect(listed.json()).toStrictEqual([
      { id: 1, name: 'Monstera' },
      { id: 2, name: 'Fern' },
    ]);
  });
});
