/**
 * What a create costs on PostgreSQL, in figures the machine's load does not move much: CPU seconds
 * per 1,000 creates of the server process (all its threads) and of the PostgreSQL cluster (every
 * backend and auxiliary process, ended ones included), both from /proc, and WAL bytes per create
 * from the server's WAL position. Each server gets a throwaway PostgreSQL database (fsync on); after
 * a warm-up of `--requests` creates the counters are read, the same number is sent again
 * (`--in-flight` at a time, keep-alive, a new id each), and read again. Bounded by count, not time;
 * never part of `pnpm bench`. (c), our API on the embedded store, is measured too (its PostgreSQL
 * figure is the idle cluster's): the CPU that (d) and PostgreSQL together spend per create, against
 * (c)'s, is what bounds (d)/(c) on a machine whose cores they share with the load.
 * `--env NAME=VALUE` (repeatable) sets a variable of the server, e.g. PLANT_DB_POOL_SIZE, to compare
 * settings. With `--webhook`, one receiver on loopback (answering 204) is subscribed first, and the
 * second reading waits until it got every delivery: the figures are then those of a create plus its
 * delivery, all in the one process. `--perf` samples the PostgreSQL processes with Linux `perf`
 * during the measured creates and prints where their CPU goes, by function.
 *
 *   pnpm --filter @org/plant-bench postgres-cost [--server c,d,g] [--requests 10000] [--in-flight 50] [--env NAME=VALUE] [--webhook] [--perf]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startReceiver } from '../src/lean-receiver.ts';
import type { ServerKey } from '../src/options.ts';
import { openPostgres } from '../src/postgres.ts';
import { processCpuSeconds } from '../src/proc-cpu.ts';
import { post, startServer } from '../src/server-process.ts';
import { BENCH_HEADERS, createTargets, sendCreates } from '../src/targets.ts';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'c,d,g' },
    requests: { type: 'string', default: '10000' },
    'in-flight': { type: 'string', default: '50' },
    env: { type: 'string', multiple: true, default: [] },
    perf: { type: 'boolean', default: false },
    webhook: { type: 'boolean', default: false },
    top: { type: 'string', default: '30' },
  },
});
const keys = (values.server ?? '').split(',') as ServerKey[];
const count = Number(values.requests);
const inFlight = Number(values['in-flight']);
if (!Number.isInteger(count) || count < 1) throw new Error('--requests must be a whole number ≥ 1.');
if (!Number.isInteger(inFlight) || inFlight < 1 || inFlight > count) {
  throw new Error('--in-flight must be a whole number from 1 to --requests.');
}
const extraEnv = Object.fromEntries(
  (values.env ?? []).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--env takes NAME=VALUE (got ${pair}).`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

const postgres = await openPostgres(process.env);
if (typeof postgres === 'string') throw new Error(`PostgreSQL is not available: ${postgres}`);

/** `perf record` of the PostgreSQL processes (those alive when it starts: the pool's connections are). */
const samplePostgres = (file: string) => {
  const pids = postgres.processIds();
  if (pids === undefined) throw new Error('--perf needs the throwaway PostgreSQL, not BENCH_POSTGRES_URL.');
  const perf = spawn('perf', ['record', '-F', '999', '-g', '-o', file, '-p', pids.join(',')], { stdio: 'ignore' });
  const exited = new Promise((resolve, reject) => {
    perf.once('exit', resolve);
    perf.once('error', (error) =>
      reject(new Error(`--perf needs Linux perf (apt-get install linux-perf): ${error.message}`)),
    );
  });
  return {
    stop: async () => {
      perf.kill('SIGINT');
      await exited;
    },
    report: () =>
      execFileSync(
        'perf',
        ['report', '-i', file, '--no-children', '-g', 'none', '--sort', 'comm,dso,symbol', '--stdio'],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
          maxBuffer: 64 * 2 ** 20,
        },
      )
        .split('\n')
        .filter((line) => /^\s+\d/.test(line))
        .slice(0, Number(values.top))
        .join('\n'),
  };
};
/** CPU seconds per create, API process and PostgreSQL together, by server. */
const cpuPerCreate = new Map<ServerKey, number>();
try {
  for (const target of createTargets(postgres).filter((candidate) => keys.includes(candidate.key))) {
    const dir = mkdtempSync(join(tmpdir(), 'plant-bench-postgres-cost-'));
    const instance = await target.instance();
    Object.assign(instance.command.env, extraEnv);
    // A loopback receiver over plain http is what the tests' flag allows.
    if (values.webhook) instance.command.env.PLANT_WEBHOOKS_ALLOW_PRIVATE = 'true';
    const receiver = values.webhook ? await startReceiver() : undefined;
    const server = await startServer(instance.command, join(dir, 'server.log'));
    /** Resolves once the receiver, if any, got `deliveries`. */
    const delivered = async (deliveries: number) => {
      const deadline = Date.now() + 600_000;
      while (receiver && receiver.received() < deliveries) {
        if (Date.now() > deadline)
          throw new Error(`the receiver got ${receiver.received()} of ${deliveries} deliveries`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      if (receiver) {
        const answer = await post(`${server.url}/webhooks`, BENCH_HEADERS, JSON.stringify({ url: receiver.url }));
        if (answer.status !== 201) throw new Error(`POST /webhooks answered ${answer.status} ${answer.body}`);
      }
      await sendCreates(server.url, 1, count, inFlight);
      await delivered(count);
      const reading = async () => ({
        api: processCpuSeconds(server.pid),
        postgres: postgres.cpuSeconds(),
        wal: await postgres.walPosition(),
        xid: await postgres.nextTransactionId(),
        at: performance.now(),
      });
      const before = await reading();
      const sampling = values.perf ? samplePostgres(join(dir, 'perf.data')) : undefined;
      await sendCreates(server.url, 1_000_000_000, count, inFlight);
      await delivered(2 * count);
      const after = await reading();
      await sampling?.stop();
      const perThousand = (seconds: number) => ((seconds * 1000) / count).toFixed(3);
      const postgresSeconds =
        before.postgres === undefined || after.postgres === undefined ? undefined : after.postgres - before.postgres;
      const cluster =
        postgresSeconds === undefined
          ? 'PostgreSQL CPU unknown (not our server)'
          : `PostgreSQL ${perThousand(postgresSeconds)} CPU s`;
      // A server without a database (c) does not own the cluster's idle CPU.
      const ownPostgres = instance.command.env.DATABASE_URL === undefined ? 0 : (postgresSeconds ?? 0);
      cpuPerCreate.set(target.key, (after.api - before.api + ownPostgres) / count);
      const settings = `${values.webhook ? 'one webhook receiver, ' : ''}${Object.entries(extraEnv)
        .map(([name, value]) => `${name}=${value} `)
        .join('')}`;
      console.log(
        `(${target.key}) ${target.name}, ${settings}${inFlight} in flight, ${count} creates: per 1,000 creates${values.webhook ? ' and their deliveries' : ''} API ${perThousand(after.api - before.api)} CPU s, ${cluster}; ${(Number(after.wal - before.wal) / count).toFixed(0)} WAL bytes per create, ${(Number(after.xid - before.xid) / (count / 1000)).toFixed(0)} write transactions per 1,000 (${((count * 1000) / (after.at - before.at)).toFixed(0)} creates/s, load-dependent)`,
      );
      const databaseUrl = instance.command.env.DATABASE_URL;
      if (databaseUrl !== undefined) {
        console.log(
          `(${target.key}) ${(await postgres.bytesPerPlant(databaseUrl)).toFixed(0)} bytes on disk per plant`,
        );
      }
      if (sampling) console.log(sampling.report());
    } finally {
      await server.stop();
      await receiver?.close();
      await instance.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const sqlite = cpuPerCreate.get('c');
  const onPostgres = cpuPerCreate.get('d');
  if (sqlite !== undefined && onPostgres !== undefined) {
    console.log(
      `(d) with PostgreSQL spends ${(onPostgres / sqlite).toFixed(2)}× the CPU per create of (c): on cores that they saturate, (d) makes about ${(sqlite / onPostgres).toFixed(2)}× (c)'s creates/s (nearer 1 by what a load generator on the same cores takes)`,
    );
  }
} finally {
  await postgres.close();
}
