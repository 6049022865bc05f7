import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { httpRequest, postPlant } from '#test/http-request';
import { logLines, MAIN_TEST_TOKEN, runMain, runWorker, startMain, startWorker } from '#test/main-process';
import { describeWithPostgres } from '#test/postgres-test-database';
import {
  MAIN_AUTH as auth,
  listDeliveries as deliveries,
  processFixtures,
  registerEndpoint as register,
  WEBHOOK_PROCESS_ENV as WEBHOOK_ENV,
} from '#test/process-fixtures';
import { until } from '#test/until';
import { WORKER_NEEDS_DATABASE } from '../src/config.ts';

/**
 * Delivery as its own role: API replicas with PLANT_WEBHOOK_DELIVERY=false and webhook worker
 * processes (node src/worker.ts) on one PostgreSQL database.
 */

const { dataDir: makeDataDir, receiver, database: freshTestDatabase } = processFixtures('plant_worker_role');

const API_ONLY = { ...WEBHOOK_ENV, PLANT_API_TOKENS: MAIN_TEST_TOKEN, PLANT_WEBHOOK_DELIVERY: 'false' };

const database = async () => (await freshTestDatabase()).url;

/** An API-only replica on a fresh database, and a receiver registered with it as an endpoint. */
const apiWithEndpoint = async () => {
  const url = await database();
  const api = await startMain({ ...API_ONLY, DATABASE_URL: url });
  const hook = await receiver();
  const endpoint = await register(api.url, hook.url);
  return { url, api, hook, endpoint };
};

/** The worker's count of deliveries with this outcome, from its /metrics. */
const attempts = async (worker: string, outcome: string): Promise<number> => {
  const { text } = await httpRequest(`${worker}/metrics`);
  const line = text.split('\n').find((row) => row.startsWith(`plant_webhook_deliveries_total{outcome="${outcome}"}`));
  return Number(line?.split(' ')[1]);
};

const createPlants = async (api: string, ids: bigint[]) => {
  await Promise.all(
    ids.map(async (id) => {
      const answer = await postPlant(api, MAIN_TEST_TOKEN, { id, name: `Plant ${id}` });
      expect(answer.status, answer.text).toBe(200);
    }),
  );
};

describe('the webhook worker entry', () => {
  it('refuses to start on the embedded store, with one line', async () => {
    const worker = runWorker({});
    expect(await worker.exited()).toStrictEqual({ code: 1, signal: null });
    expect(worker.stderr()).toBe(`${WORKER_NEEDS_DATABASE}\n`);
  });

  it('with PLANT_WEBHOOK_DELIVERY=false on the embedded store, delivers nothing and says so at start', async () => {
    const dataDir = makeDataDir('plant-worker-off-');
    const api = await startMain({ ...API_ONLY, PLANT_DATA_DIR: dataDir });
    const hook = await receiver();
    const endpoint = await register(api.url, hook.url);
    await createPlants(api.url, [1n, 2n, 3n]);
    // What an enabled worker would have delivered by now, many times over (its poll is 1 s).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hook.received).toStrictEqual([]);
    expect((await deliveries(api.url, endpoint.id)).map((delivery) => delivery.status)).toStrictEqual([
      'pending',
      'pending',
      'pending',
    ]);
    expect(logLines(api.stdout()).find((line) => line.msg?.startsWith('PLANT_WEBHOOK_DELIVERY=false'))).toMatchObject({
      level: 40,
      msg: 'PLANT_WEBHOOK_DELIVERY=false on the embedded store: no process delivers webhooks until it is true again',
    });
  }, 20_000);

  it('still accepts the deprecated PLANT_WEBHOOK_WORKER=off, with one warning at start', async () => {
    const { PLANT_WEBHOOK_DELIVERY: _, ...env } = API_ONLY;
    const api = await startMain({
      ...env,
      PLANT_WEBHOOK_WORKER: 'off',
      PLANT_DATA_DIR: makeDataDir('plant-worker-old-'),
    });
    const lines = logLines(api.stdout());
    expect(lines.filter((line) => line.msg?.startsWith('PLANT_WEBHOOK_WORKER is deprecated'))).toMatchObject([
      {
        level: 40,
        msg: 'PLANT_WEBHOOK_WORKER is deprecated: set PLANT_WEBHOOK_DELIVERY=true or false instead (on is true, off is false)',
      },
    ]);
    expect(lines.some((line) => line.msg?.startsWith('PLANT_WEBHOOK_DELIVERY=false on the embedded store'))).toBe(true);
  }, 20_000);

  it('refuses PLANT_WEBHOOK_DELIVERY and PLANT_WEBHOOK_WORKER that disagree, with one line', async () => {
    const api = runMain({ ...API_ONLY, PLANT_WEBHOOK_WORKER: 'on', PLANT_DATA_DIR: makeDataDir('plant-worker-both-') });
    expect(await api.exited()).toStrictEqual({ code: 1, signal: null });
    expect(api.stderr()).toBe(
      'Invalid configuration: PLANT_WEBHOOK_DELIVERY disagrees with the deprecated PLANT_WEBHOOK_WORKER; set PLANT_WEBHOOK_DELIVERY alone.\n',
    );
  });
});

describe('the delivery thread of the service process (PLANT_WEBHOOK_DELIVERY=true, the default)', () => {
  it('delivers, counted in the service’s /metrics, logged on its stdout, and records the attempt in flight at SIGTERM', async () => {
    const dataDir = makeDataDir('plant-worker-thread-');
    const env = {
      ...WEBHOOK_ENV,
      PLANT_API_TOKENS: MAIN_TEST_TOKEN,
      PLANT_DATA_DIR: dataDir,
      PLANT_METRICS_ON_API_PORT: 'true',
    };
    const first = await startMain(env);
    const hook = await receiver();
    const lazyStart = 'a plant was announced to a webhook endpoint: starting webhook delivery';
    const startedLazily = (output: string) => logLines(output).some((line) => line.msg === lazyStart);
    const endpoint = await register(first.url, hook.url);
    // No endpoint at start: no thread until a create announces a plant.
    expect(startedLazily(first.stdout())).toBe(false);
    hook.answer((_, index) => ({ status: index === 0 ? 503 : 200 }));
    await createPlants(first.url, [1n]);
    await hook.waitFor(2);
    expect(startedLazily(first.stdout())).toBe(true);
    await until(
      () => attempts(first.url, 'delivered'),
      (delivered) => delivered === 1,
    );
    expect(await attempts(first.url, 'retry')).toBe(1);
    // The thread's lines are written by the process's own log writer: whole JSON lines.
    expect(logLines(first.stdout()).find((line) => line.msg === 'webhook attempt failed; will retry')).toMatchObject({
      component: 'webhooks',
      plantId: '1',
      status: 503,
    });

    hook.answer({ status: 200, delayMs: 2_000 });
    await createPlants(first.url, [2n]);
    await hook.waitFor(3);
    first.child.kill('SIGTERM');
    expect(await first.exited()).toStrictEqual({ code: 0, signal: null });

    const second = await startMain(env);
    const list = await deliveries(second.url, endpoint.id);
    expect(list.map(({ plantId, status, attempts }) => ({ plantId, status, attempts }))).toStrictEqual([
      { plantId: 2, status: 'delivered', attempts: 1 },
      { plantId: 1, status: 'delivered', attempts: 2 },
    ]);
    expect(hook.received).toHaveLength(3);
  }, 30_000);
});

describeWithPostgres('webhook worker processes on one PostgreSQL', () => {
  it('one API-only replica and two workers: every event reaches every endpoint exactly once, the work shared', async () => {
    const url = await database();
    const api = await startMain({ ...API_ONLY, DATABASE_URL: url });
    const hooks = [await receiver(), await receiver()];
    // Answers take 50 ms, as a slow receiver's do. Workers learn of new deliveries by polling every
    // 250 ms, and claim only what their endpoint windows let them send: growing from one attempt in
    // flight, one worker needs about a second for the backlog, so the other's polls find part of it.
    // At 5 ms a busy CI machine once let one worker take all 300 before the other's next claim.
    for (const hook of hooks) hook.answer({ status: 204, delayMs: 50 });
    const endpoints = [await register(api.url, hooks[0]?.url ?? ''), await register(api.url, hooks[1]?.url ?? '')];
    const workers = await Promise.all([1, 2].map(() => startWorker({ ...WEBHOOK_ENV, DATABASE_URL: url })));

    const ids = Array.from({ length: 150 }, (_, index) => 9007199254740993n + BigInt(index));
    await createPlants(api.url, ids);
    // Replays announce nothing.
    await createPlants(api.url, ids.slice(0, 10));

    for (const [index, hook] of hooks.entries()) {
      await hook.waitFor(ids.length, 30_000);
      const endpoint = endpoints[index] as { id: string; secret: string };
      const list = await until(
        () => deliveries(api.url, endpoint.id),
        (rows) => rows.length === ids.length && rows.every((row) => row.status === 'delivered'),
        10_000,
      );
      expect(list.every((row) => row.attempts === 1)).toBe(true);
      expect(new Set(list.map((row) => row.plantId))).toStrictEqual(new Set(ids));
      // Each signed with the endpoint's secret, and each webhook-id a delivery of the list.
      const verifier = new Webhook(endpoint.secret);
      for (const request of hook.received) {
        expect(() => verifier.verify(request.body, request.headers as Record<string, string>)).not.toThrow();
      }
      expect(new Set(hook.received.map((request) => request.headers['webhook-id']))).toStrictEqual(
        new Set(list.map((row) => row.id)),
      );
    }
    // Long enough for a second copy of any delivery to arrive (the workers poll every 250 ms).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const hook of hooks) expect(hook.received).toHaveLength(ids.length);
    const shares = await Promise.all(workers.map((worker) => attempts(worker.url, 'delivered')));
    expect(shares.reduce((sum, share) => sum + share, 0)).toBe(2 * ids.length);
    expect(Math.min(...shares), `deliveries per worker: ${shares}`).toBeGreaterThan(0);
  }, 60_000);

  it('PLANT_WEBHOOK_DELIVERY=false delivers nothing; a worker started later delivers the backlog', async () => {
    const { url, api, hook, endpoint } = await apiWithEndpoint();
    const ids = [1n, 2n, 3n, 4n, 5n];
    await createPlants(api.url, ids);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(hook.received).toStrictEqual([]);
    expect((await deliveries(api.url, endpoint.id)).every((row) => row.status === 'pending')).toBe(true);

    await startWorker({ ...WEBHOOK_ENV, DATABASE_URL: url });
    await hook.waitFor(ids.length, 10_000);
    expect(hook.received.map((request) => JSON.parse(request.body).id).sort()).toStrictEqual([1, 2, 3, 4, 5]);
  }, 30_000);

  it('serves /healthz, /readyz and /metrics but no API route, and drains on SIGTERM: the attempt in flight is recorded', async () => {
    const { url, api, hook, endpoint } = await apiWithEndpoint();
    const worker = await startWorker({ ...WEBHOOK_ENV, DATABASE_URL: url });

    expect((await httpRequest(`${worker.url}/healthz`)).json()).toStrictEqual({ status: 'ok' });
    expect((await httpRequest(`${worker.url}/readyz`)).json()).toStrictEqual({ status: 'ready' });
    const metrics = await httpRequest(`${worker.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('plant_webhook_deliveries_pending 0');
    expect(metrics.text).toContain('plant_store_pool_connections{state="total"}');
    const plants = await httpRequest(`${worker.url}/plants`, { headers: auth });
    expect([plants.status, plants.json()]).toMatchObject([404, { error: 404 }]);

    // The receiver takes 2 s to answer: the worker is told to stop while the attempt is in flight,
    // and stops only once it is answered and recorded (within its 5 s grace).
    hook.answer({ status: 200, delayMs: 2_000 });
    await createPlants(api.url, [42n]);
    await hook.waitFor(1, 10_000);
    worker.child.kill('SIGTERM');
    const draining = await until(
      () => httpRequest(`${worker.url}/readyz`),
      (answer) => answer.status === 503,
      1_500,
    );
    expect(draining.json()).toMatchObject({ error: 503 });
    expect(await worker.exited()).toStrictEqual({ code: 0, signal: null });
    expect(logLines(worker.stdout()).map((line) => line.msg)).toContain('stopped');
    const [recorded] = await deliveries(api.url, endpoint.id);
    expect(recorded).toMatchObject({ plantId: 42, status: 'delivered', attempts: 1 });
    expect(hook.received.map((request) => request.headers['webhook-id'])).toStrictEqual([recorded?.id]);
  }, 30_000);
});
