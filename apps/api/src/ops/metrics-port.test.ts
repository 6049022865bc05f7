import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { makeDataDir } from '#test/test-server';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { SqlitePlantStore } from '../store/sqlite/sqlite-store.ts';
import type { WebhookStore } from '../store/webhook-store.ts';
import { createWebhookMetrics } from '../webhooks/delivery/webhook-metrics.ts';
import { createMetrics } from './metrics.ts';
import { createOpsApp, storeReadiness } from './ops-routes.ts';

const TOKEN = 'metrics-port-token-0123456789';

const servers: Server[] = [];
let dataDir: string;
let store: SqlitePlantStore;
let backlogReads: number;

const listen = async (app: Parameters<typeof createServer>[1]) => {
  const server = createServer(app).listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** The API with serveMetrics off, and the listener PLANT_METRICS_PORT would get, on one store. */
const start = async ({ serveMetrics }: { serveMetrics: boolean }) => {
  const metrics = createMetrics({ processMetrics: false });
  const counted: WebhookStore = Object.create(store.webhooks, {
    backlog: {
      value: () => {
        backlogReads += 1;
        return store.webhooks.backlog();
      },
    },
  });
  createWebhookMetrics(metrics.registry, counted);
  const logger = pino({ enabled: false });
  const api = createApp({
    store,
    authenticate: staticTokens([{ hash: hashToken(TOKEN) }]),
    metrics,
    serveMetrics,
    logger,
  });
  const ops = createOpsApp({
    readiness: storeReadiness(store),
    alive: () => store.alive(),
    metrics,
    isDraining: () => false,
    logger,
  });
  return { api: await listen(api), ops: await listen(ops) };
};

beforeEach(async () => {
  dataDir = makeDataDir();
  store = await SqlitePlantStore.open(dataDir);
  backlogReads = 0;
});
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the metrics port', () => {
  it('serves /metrics, /healthz and /readyz, while the API port answers /metrics 404', async () => {
    const { api, ops } = await start({ serveMetrics: false });
    expect((await fetch(`${api}/plants`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    await expectError(await fetch(`${api}/metrics`), 404, /No operation exists at this path/);

    const scrape = await fetch(`${ops}/metrics`);
    expect(scrape.status).toBe(200);
    expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await scrape.text();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/plants",status="200"\} 1$/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\(unmatched\)",status="404"\} 1$/m);
    expect(text).toMatch(/^plant_webhook_deliveries_pending 0$/m);
    expect(await (await fetch(`${ops}/healthz`)).json()).toStrictEqual({ status: 'ok' });
    expect(await (await fetch(`${ops}/readyz`)).json()).toStrictEqual({ status: 'ready' });
    await expectError(await fetch(`${ops}/plants`), 404);
    await expectError(await fetch(`${ops}/metrics`, { method: 'POST' }), 405);
    // Its own scrapes and probes are not the API's traffic.
    expect(await (await fetch(`${ops}/metrics`)).text()).not.toMatch(/route="\/(metrics|healthz|readyz)"/);
  });

  it.each([
    ['on the metrics port', false, 'ops'],
    ['on the API port (no PLANT_METRICS_PORT)', true, 'api'],
  ] as const)(
    'costs the store at most one backlog query a second, however often it is scraped %s',
    async (_label, serveMetrics, port) => {
      const urls = await start({ serveMetrics });
      const started = performance.now();
      const concurrent = await Promise.all(Array.from({ length: 20 }, () => fetch(`${urls[port]}/metrics`)));
      expect(concurrent.map((response) => response.status)).toEqual(Array(20).fill(200));
      for (let scrape = 0; scrape < 20; scrape += 1) expect((await fetch(`${urls[port]}/metrics`)).status).toBe(200);
      const seconds = (performance.now() - started) / 1000;
      expect(backlogReads).toBeGreaterThanOrEqual(1);
      // Bounded by the time the scrapes took, so that a slow, busy machine cannot fail it.
      expect(backlogReads).toBeLessThanOrEqual(1 + Math.ceil(seconds));
    },
  );
});
