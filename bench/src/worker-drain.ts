/**
 * Deliveries per second per webhook worker process (issue 20, delivery as its own role). Each level
 * starts, on a fresh PostgreSQL database, one API-only replica (PLANT_WEBHOOK_DELIVERY=false) with
 * `--endpoints` endpoints on one loopback receiver answering 204 (several, so that a worker's
 * slots are not held to one endpoint's window), creates `--plants` plants (a backlog nobody delivers
 * yet), then starts that many `node dist/worker.js` processes. The receiver holds
 * what arrives until every worker listens, then answers; the backlog's drain is timed from then to
 * its last delivery. Also the workers' CPU time per 1,000 deliveries (from /proc), the figure that
 * sizes a deployment. Printed, never gated; run it on a quiet machine.
 *
 *   pnpm --filter @org/plant-bench worker-drain [--plants 5000] [--endpoints 4] [--workers 1,2] [--smoke]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHeldReceiver } from './held-receiver.ts';
import { openPostgres } from './postgres.ts';
import { numberList, parseScriptArgs } from './script-args.ts';
import { post, type RunningServer, startServer } from './server-process.ts';
import { API_DIR, API_SERVICE, API_WORKER, apiEnv, BENCH_HEADERS, sendCreates } from './targets.ts';

const values = parseScriptArgs(
  { plants: '5000', endpoints: '4', workers: '1,2' },
  // A few hundred plants and one worker: proves the scenario runs, measures nothing.
  ['smoke'],
);
const PLANTS = values.smoke ? 300 : Number(values.plants);
const ENDPOINTS = Number(values.endpoints);
const DELIVERIES = PLANTS * ENDPOINTS;
const LEVELS = values.smoke ? [1] : numberList(values.workers);
const IN_FLIGHT = 10;
const CLOCK_TICKS_PER_SECOND = 100;

/** User and system CPU seconds of a live process so far, from /proc/<pid>/stat. */
const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
};

const postgres = await openPostgres(process.env);
if (typeof postgres === 'string') {
  console.log(`worker drain skipped: ${postgres}`);
  process.exit(0);
}

const drain = async (workerCount: number) => {
  const database = await postgres.createDatabase();
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-workers-'));
  const env = { ...apiEnv(dir), DATABASE_URL: database.url, PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true' };
  const receiver = await startHeldReceiver();
  const servers: RunningServer[] = [];
  try {
    const api = await startServer(
      { args: API_SERVICE, cwd: API_DIR, env: { ...env, PLANT_WEBHOOK_DELIVERY: 'false' } },
      join(dir, 'api.log'),
    );
    servers.push(api);
    for (let endpoint = 0; endpoint < ENDPOINTS; endpoint++) {
      const answer = await post(
        `${api.url}/webhooks`,
        BENCH_HEADERS,
        JSON.stringify({ url: receiver.url(`hook/${endpoint}`) }),
      );
      if (answer.status !== 201) throw new Error(`POST /webhooks answered ${answer.status} ${answer.body}`);
    }
    await sendCreates(api.url, 1, PLANTS, IN_FLIGHT);
    const workers = await Promise.all(
      Array.from({ length: workerCount }, (_, index) =>
        startServer({ args: API_WORKER, cwd: API_DIR, env }, join(dir, `worker-${index}.log`)),
      ),
    );
    servers.push(...workers);
    const cpuBefore = workers.map((worker) => cpuSeconds(worker.pid));
    const start = performance.now();
    receiver.open();
    await receiver.until(DELIVERIES);
    const seconds = (performance.now() - start) / 1000;
    const cpu = workers.reduce((sum, worker, index) => sum + cpuSeconds(worker.pid) - (cpuBefore[index] ?? 0), 0);
    const rate = DELIVERIES / seconds;
    console.log(
      `${workerCount} worker process${workerCount === 1 ? '' : 'es'}: backlog of ${DELIVERIES} deliveries (${PLANTS} plants × ${ENDPOINTS} endpoints) drained at ${Math.round(rate)}/s, ${Math.round(rate / workerCount)}/s per worker process; ${((cpu / DELIVERIES) * 1000).toFixed(2)} CPU-seconds per 1,000 deliveries in the workers`,
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    await receiver.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
};

try {
  for (const level of LEVELS) await drain(level);
} finally {
  await postgres.close();
}
