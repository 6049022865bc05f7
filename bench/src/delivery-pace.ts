/**
 * Whether deliveries keep pace with creation. Our API with two endpoints subscribed, a healthy
 * receiver answering 204 at once and a receiver that reads each delivery and never answers, is
 * loaded by wrk creating plants at full speed for `--duration` seconds. It prints the creates per
 * second, how many deliveries reached the healthy receiver during the load (and their share of the
 * plants created), and the rate at which its backlog drained after the load stopped, against the
 * create rate of the same run: on the embedded store, on PostgreSQL, and on PostgreSQL with the
 * delivery role in a process of its own (`pnpm worker` beside an API-only replica). Never gated.
 *
 *   pnpm --filter @org/plant-bench delivery-pace [--duration 60] [--drain-limit 600] [--smoke]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startHeldReceiver } from './held-receiver.ts';
import { startReceiver } from './lean-receiver.ts';
import { openPostgres } from './postgres.ts';
import { post, type RunningServer, startServer } from './server-process.ts';
import { API_DIR, API_SERVICE, API_WORKER, apiEnv, BENCH_HEADERS, BENCH_TOKEN } from './targets.ts';
import { ensureWrk, runWrk } from './wrk.ts';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    'drain-limit': { type: 'string', default: '600' },
    smoke: { type: 'boolean', default: false },
  },
});
const SMOKE = values.smoke;
const DURATION_S = SMOKE ? 2 : Number(values.duration);
const DRAIN_LIMIT_MS = (SMOKE ? 60 : Number(values['drain-limit'])) * 1000;

type Setup = { name: string; database?: string; deliveryProcess?: boolean };

const subscribe = async (api: string, url: string) => {
  const answer = await post(`${api}/webhooks`, BENCH_HEADERS, JSON.stringify({ url }));
  if (answer.status !== 201) throw new Error(`POST /webhooks answered ${answer.status} ${answer.body}`);
};

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const measure = async ({ name, database, deliveryProcess = false }: Setup): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-pace-'));
  const env = {
    ...apiEnv(dir),
    PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    ...(database !== undefined && { DATABASE_URL: database }),
  };
  const servers: RunningServer[] = [];
  const healthy = await startReceiver();
  const hanging = await startHeldReceiver({ hang: true });
  try {
    const api = await startServer(
      { args: API_SERVICE, cwd: API_DIR, env: { ...env, ...(deliveryProcess && { PLANT_WEBHOOK_DELIVERY: 'false' }) } },
      join(dir, 'api.log'),
    );
    servers.push(api);
    if (deliveryProcess) {
      servers.push(await startServer({ args: API_WORKER, cwd: API_DIR, env }, join(dir, 'worker.log')));
    }
    await subscribe(api.url, hanging.url());
    await subscribe(api.url, healthy.url);
    const load = await runWrk({
      url: api.url,
      token: BENCH_TOKEN,
      connections: 50,
      threads: 1,
      seconds: DURATION_S,
      firstId: 1,
    });
    const created = load.requests - load.non2xx;
    const during = healthy.received();
    const drainStart = performance.now();
    while (healthy.received() < created && performance.now() - drainStart < DRAIN_LIMIT_MS) await delay(50);
    const drainSeconds = (performance.now() - drainStart) / 1000;
    const drained = healthy.received() - during;
    const createRate = created / (load.durationUs / 1e6);
    const drainRate = drained / drainSeconds;
    const complete = healthy.received() >= created ? '' : ` (stopped after ${DRAIN_LIMIT_MS / 1000} s)`;
    return [
      `${name}: ${createRate.toFixed(0)} creates/s for ${DURATION_S} s (${created} plants, ${load.non2xx} other answers)`,
      `  during the load: ${during} deliveries to the healthy receiver, ${((100 * during) / created).toFixed(1)}% of the plants created (target ≥ 25%)`,
      `  after it: ${drained} more in ${drainSeconds.toFixed(1)} s${complete}, ${drainRate.toFixed(0)} deliveries/s = ${(drainRate / createRate).toFixed(2)}× the create rate (target ≥ 0.5×)`,
    ].join('\n');
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await healthy.close();
    await hanging.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

ensureWrk();
const postgres = await openPostgres(process.env);
try {
  console.log(await measure({ name: '(c) embedded SQLite, delivery in-process' }));
  if (typeof postgres === 'string') {
    console.log(`PostgreSQL skipped: ${postgres}`);
  } else {
    for (const deliveryProcess of [false, true]) {
      const database = await postgres.createDatabase();
      try {
        const name = deliveryProcess
          ? '(d) PostgreSQL, delivery in its own process'
          : '(d) PostgreSQL, delivery in-process';
        console.log(await measure({ name, database: database.url, deliveryProcess }));
      } finally {
        await database.drop();
      }
    }
  }
} finally {
  if (typeof postgres !== 'string') await postgres.close();
}
