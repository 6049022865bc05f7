import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeStore } from '#test/fake-store';
import { httpRequest, postPlant } from '#test/http-request';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { type PlantStore, StoreUnavailableError } from '../store/plant-store.ts';
import { createMetrics, type MetricsOptions } from './metrics.ts';
import { createOpsApp, READINESS_TIMEOUT_MS, storeReadiness } from './ops-routes.ts';

const TOKEN = 'ops-test-token-0123456789abcdef';

let server: Server | undefined;
const others: Server[] = [];
afterEach(async () => {
  for (const closing of [...(server ? [server] : []), ...others.splice(0)]) {
    closing.closeAllConnections();
    await new Promise<void>((resolve) => closing.close(() => resolve()));
  }
  server = undefined;
});

/** Serves `app` on 127.0.0.1 until the test ends. */
const listen = async (app: Parameters<typeof createServer>[1]): Promise<string> => {
  const listening = createServer(app).listen(0, '127.0.0.1');
  others.push(listening);
  await new Promise((resolve) => listening.once('listening', resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
};

/** A store that counts the health checks it is asked. */
const countingStore = () => {
  const counted = { reads: 0 };
  const store = fakeStore({
    health: async () => {
      counted.reads += 1;
    },
  });
  return Object.assign(counted, { store });
};

const start = async (
  store: PlantStore = fakeStore(),
  { draining = () => false, metrics }: { draining?: () => boolean; metrics?: MetricsOptions } = {},
) => {
  const app = createApp({
    store,
    authenticate: staticTokens([{ hash: hashToken(TOKEN) }]),
    isDraining: draining,
    serveMetrics: true,
    ...(metrics && { metrics: createMetrics(metrics) }),
  });
  server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

describe('GET /healthz', () => {
  it('answers 200 without authentication, uncached, whatever the store says', async () => {
    const url = await start(fakeStore({ health: () => Promise.reject(new StoreUnavailableError('down')) }));
    const answer = await httpRequest(`${url}/healthz`);
    expect([answer.status, answer.json()]).toStrictEqual([200, { status: 'ok' }]);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect((await httpRequest(`${url}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it('answers 503, and so does /readyz, while the store is down and restarting', async () => {
    let alive = false;
    const url = await start(fakeStore({ alive: () => alive }));
    for (const path of ['/healthz', '/readyz']) {
      const answer = await httpRequest(`${url}${path}`);
      expect([answer.status, answer.headers['retry-after'], answer.json()]).toStrictEqual([
        503,
        '1',
        { error: 503, message: 'The plant store is down and restarting.' },
      ]);
    }
    alive = true;
    expect((await httpRequest(`${url}/healthz`)).status).toBe(200);
    expect((await httpRequest(`${url}/readyz`)).status).toBe(200);
  });

  it('answers 405 with Allow to other methods', async () => {
    const url = await start();
    const answer = await httpRequest(`${url}/healthz`, { method: 'POST' });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(answer.json()).toMatchObject({ error: 405 });
  });
});

describe('GET /readyz', () => {
  it('answers 200 when the store is healthy, without authentication', async () => {
    const url = await start();
    const answer = await httpRequest(`${url}/readyz`);
    expect([answer.status, answer.json()]).toStrictEqual([200, { status: 'ready' }]);
  });

  it('answers 503 with the Error shape and Retry-After when the store is unavailable, naming no internals', async () => {
    const url = await start(
      fakeStore({
        health: () => Promise.reject(new StoreUnavailableError('connect ECONNREFUSED 10.1.2.3:5432 (secret-host)')),
      }),
    );
    const answer = await httpRequest(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBe('1');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.json()).toStrictEqual({ error: 503, message: 'The plant store is not ready; retry later.' });
    expect(answer.text).not.toContain('secret-host');
  });

  it('answers 503 within its time limit when the store does not answer at all', async () => {
    const url = await start(fakeStore({ health: () => new Promise(() => {}) }));
    const started = Date.now();
    const answer = await httpRequest(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(Date.now() - started).toBeGreaterThanOrEqual(READINESS_TIMEOUT_MS - 50);
    // The store never answers, so any answer is the limit's; the bound only tells a limit of the
    // wrong size, generously (twice the limit) so that a busy machine cannot fail it.
    expect(Date.now() - started).toBeLessThan(READINESS_TIMEOUT_MS * 2);
  });

  it('answers 503 while draining, and keeps serving the API meanwhile', async () => {
    let draining = false;
    const url = await start(fakeStore(), { draining: () => draining });
    expect((await httpRequest(`${url}/readyz`)).status).toBe(200);
    draining = true;
    const answer = await httpRequest(`${url}/readyz`);
    expect([answer.status, answer.json()]).toStrictEqual([
      503,
      { error: 503, message: 'The service is shutting down.' },
    ]);
    expect((await postPlant(url, TOKEN, { id: 1n, name: 'Monstera' })).status).toBe(200);
  });

  it('asks the store at most once a second however often it is probed, on the API port and the metrics port together', async () => {
    const counting = countingStore();
    let clock = 0;
    const readiness = storeReadiness(counting.store, { now: () => clock });
    const api = await listen(
      createApp({ store: counting.store, authenticate: staticTokens([{ hash: hashToken(TOKEN) }]), readiness }),
    );
    const logger = pino({ enabled: false });
    const metrics = createMetrics({ processMetrics: false });
    const ops = await listen(createOpsApp({ readiness, alive: () => true, metrics, isDraining: () => false, logger }));
    const probe = async (index: number) => (await httpRequest(`${index % 2 === 0 ? api : ops}/readyz`)).status;

    expect(await Promise.all(Array.from({ length: 40 }, (_, index) => probe(index)))).toStrictEqual(
      Array(40).fill(200),
    );
    for (let index = 0; index < 10; index++) expect(await probe(index)).toBe(200);
    expect(counting.reads).toBe(1);
    clock = 999;
    expect([await probe(0), await probe(1)]).toStrictEqual([200, 200]);
    expect(counting.reads).toBe(1);
    clock = 1_000;
    expect([await probe(0), await probe(1)]).toStrictEqual([200, 200]);
    expect(counting.reads).toBe(2);
  });

  it('asks the store at most once a second by default', async () => {
    const counting = countingStore();
    const url = await start(counting.store);
    const started = performance.now();
    for (let index = 0; index < 20; index++) expect((await httpRequest(`${url}/readyz`)).status).toBe(200);
    // However slow the machine, never more than one read per second begun.
    expect(counting.reads).toBeLessThanOrEqual(1 + Math.floor((performance.now() - started) / 1_000));
  });
});

describe('GET /metrics', () => {
  const sample = (text: string, name: string, labels: string): number | undefined => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
    return line === undefined ? undefined : Number(line.split(' ').at(-1));
  };

  it('is not served on the API port unless asked: the API port is the public one', async () => {
    const url = await listen(
      createApp({ store: fakeStore(), authenticate: staticTokens([{ hash: hashToken(TOKEN) }]) }),
    );
    const answer = await httpRequest(`${url}/metrics`);
    expect([answer.status, answer.json()]).toStrictEqual([
      404,
      { error: 404, message: expect.stringMatching(/No operation exists at this path/) },
    ]);
  });

  it('counts and times requests by method, route pattern and status, without authentication', async () => {
    const url = await start(fakeStore({ get: async (id) => (id === 1n ? { id, name: 'Monstera' } : undefined) }));
    await postPlant(url, TOKEN, { id: 1n, name: 'Monstera' });
    await postPlant(url, TOKEN, { id: 2n, name: 'Fern' });
    await postPlant(url, 'wrong-token-0123456789abcdef', { id: 3n, name: 'Aloe' });
    const auth = { authorization: `Bearer ${TOKEN}` };
    await httpRequest(`${url}/plants/1`, { headers: auth });
    await httpRequest(`${url}/plants/9007199254740993`, { headers: auth });
    await httpRequest(`${url}/no/such/path/42`);

    const answer = await httpRequest(`${url}/metrics`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = answer.text;
    expect(sample(text, 'http_requests_total', 'method="POST",route="/plants",status="200"')).toBe(2);
    expect(sample(text, 'http_requests_total', 'method="POST",route="/plants",status="401"')).toBe(1);
    expect(sample(text, 'http_requests_total', 'method="GET",route="/plants/:id",status="200"')).toBe(1);
    expect(sample(text, 'http_requests_total', 'method="GET",route="/plants/:id",status="404"')).toBe(1);
    expect(sample(text, 'http_requests_total', 'method="GET",route="(unmatched)",status="404"')).toBe(1);
    // Raw paths never become labels: ids would make the series unbounded.
    expect(text).not.toContain('9007199254740993');
    expect(text).not.toContain('/no/such/path');
    expect(
      sample(text, 'http_request_duration_seconds_bucket', 'le="+Inf",method="POST",route="/plants",status="200"'),
    ).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_count', 'method="POST",route="/plants",status="200"')).toBe(2);
    expect(text).toMatch(/^http_requests_in_flight \d+$/m);
    expect(sample(text, 'plant_store_operation_duration_seconds_count', 'operation="create",outcome="ok"')).toBe(2);
  });

  it('counts store errors by operation and kind, next to the 503 and 500 answers', async () => {
    const url = await start(
      fakeStore({
        create: () => Promise.reject(new StoreUnavailableError('down')),
        get: () => Promise.reject(new Error('bug')),
      }),
    );
    const unavailable = await postPlant(url, TOKEN, { id: 1n, name: 'Monstera' });
    expect([unavailable.status, unavailable.headers['retry-after']]).toStrictEqual([503, '1']);
    expect((await httpRequest(`${url}/plants/1`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(500);

    const text = (await httpRequest(`${url}/metrics`)).text;
    expect(sample(text, 'plant_store_errors_total', 'operation="create",kind="unavailable"')).toBe(1);
    expect(sample(text, 'plant_store_errors_total', 'operation="get",kind="unexpected"')).toBe(1);
    expect(sample(text, 'http_requests_total', 'method="POST",route="/plants",status="503"')).toBe(1);
  });

  it('reports the connection pool and process metrics when configured', async () => {
    const url = await start(fakeStore(), {
      metrics: { processMetrics: true, poolStats: () => ({ total: 4, idle: 3, waiting: 0 }) },
    });
    const text = (await httpRequest(`${url}/metrics`)).text;
    expect(sample(text, 'plant_store_pool_connections', 'state="total"')).toBe(4);
    expect(sample(text, 'plant_store_pool_connections', 'state="idle"')).toBe(3);
    expect(sample(text, 'plant_store_pool_connections', 'state="waiting"')).toBe(0);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });
});
