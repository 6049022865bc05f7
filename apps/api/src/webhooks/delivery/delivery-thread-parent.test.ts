import { readdirSync, readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { postPlant } from '#test/http-request';
import { manualClock } from '#test/manual-clock';
import { startTestServer, TEST_TOKEN } from '#test/test-server';
import { niceOf } from '#test/thread-nice';
import { until } from '#test/until';
import { startWebhookReceiver } from '#test/webhook-receiver';
import { registerEndpoint } from '#test/webhook-service';
import { loadConfig } from '../../config.ts';
import { RESTART_DELAY_MS } from '../../store/sqlite/database-thread.ts';
import type { SqlitePlantStore } from '../../store/sqlite/sqlite-store.ts';
import { startDeliveryThread } from './delivery-thread-parent.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the delivery thread on the embedded store', () => {
  it('delivers again once the database thread it talks to was restarted', async () => {
    const clock = manualClock();
    const server = await startTestServer(undefined, { storeClock: clock, allowPrivateWebhooks: true });
    cleanups.push(() => server.cleanup());
    const receiver = await startWebhookReceiver();
    cleanups.push(() => receiver.close());
    const config = loadConfig({ PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true', PLANT_API_TOKENS: TEST_TOKEN });
    const crashes: Error[] = [];
    const delivery = await startDeliveryThread({
      store: server.store,
      config,
      logger: pino({ enabled: false }),
      writeLog: () => {},
      onCrash: (error) => crashes.push(error),
    });
    cleanups.push(() => delivery.stop());
    await registerEndpoint(server.url, receiver.url);
    expect((await postPlant(server.url, TEST_TOKEN, { id: 1n, name: 'Monstera' })).status).toBe(200);
    await receiver.waitFor(1);

    const store = server.store as SqlitePlantStore;
    await store.terminateWorkerForTesting();
    await clock.advance(RESTART_DELAY_MS);
    await until(async () => store.alive(), Boolean);
    expect((await postPlant(server.url, TEST_TOKEN, { id: 2n, name: 'Fern' })).status).toBe(200);
    // At least once: the first plant comes again if the stop cut off the record of its attempt.
    const bodies = await until(
      async () => new Set(receiver.received.map(({ body }) => body)),
      (seen) => seen.size === 2,
    );
    expect(bodies).toStrictEqual(new Set(['{"id":1,"name":"Monstera"}', '{"id":2,"name":"Fern"}']));
    expect(crashes).toStrictEqual([]);
  });

  it.skipIf(process.platform !== 'linux')('runs PLANT_WEBHOOK_DELIVERY_NICE levels below the HTTP thread', async () => {
    const server = await startTestServer(undefined, { allowPrivateWebhooks: true });
    cleanups.push(() => server.cleanup());
    const config = loadConfig({ PLANT_API_TOKENS: TEST_TOKEN, PLANT_WEBHOOK_DELIVERY_NICE: '7' });
    const delivery = await startDeliveryThread({
      store: server.store,
      config,
      logger: pino({ enabled: false }),
      writeLog: () => {},
      onCrash: () => {},
    });
    cleanups.push(() => delivery.stop());
    // A thread's name (comm) and nice value (stat field 19); the main thread's id is the pid.
    const thread = (id: string) => ({
      name: readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim(),
      nice: niceOf(`/proc/self/task/${id}/stat`),
    });
    const threads = readdirSync('/proc/self/task').map(thread);
    const main = thread(String(process.pid)).nice;
    expect(threads.filter(({ name }) => name === 'plant-webhooks').map(({ nice }) => nice)).toStrictEqual([
      Math.min(19, main + 7),
    ]);
  });
});
