/**
 * Instructions per POST /plants on a server's main thread, counted by callgrind: a figure that does
 * not move with the machine's load, so a change of a few percent shows where throughput on a shared
 * machine cannot. Each server runs under valgrind; after a warm-up of `--requests` creates its
 * counters are zeroed, the same number is sent again (10 in flight, keep-alive), and the main
 * thread's count is divided by it. For a server that announces plants to a webhook receiver (e), the
 * counters are zeroed and dumped only once the receiver got every delivery so far, so the count
 * holds exactly one delivery per create: (e) less (c) on the main thread is what a delivery costs
 * the HTTP thread (issue 19: at most 100k; the delivery thread takes the rest), and (e) less (c) on
 * every thread together is what a delivery costs the process. With both (c) and (e) in the run,
 * both figures are printed, the first as met or missed.
 * Slow (about 40 s a server, more for (e)); never part of `pnpm bench`.
 * `--in-flight` sets how many connections load it at once: what a request costs with thousands of
 * others alive (garbage collection, per-connection work) shows here without the machine's noise.
 *
 *   pnpm --filter @org/plant-bench instructions [--server b,c] [--requests 2000] [--in-flight 10] [--keep] [--threads]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ServerKey } from './options.ts';
import { openPostgres } from './postgres.ts';
import { startServer } from './server-process.ts';
import { createTargets, sendCreates } from './targets.ts';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'b,c,e' },
    requests: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '10' },
    // Keeps callgrind's output (and prints where) for callgrind_annotate.
    keep: { type: 'boolean', default: false },
    // Prints each thread's share: which of the SQLite, delivery and V8 helper threads a change moved.
    threads: { type: 'boolean', default: false },
  },
});
const keys = (values.server ?? '').split(',') as ServerKey[];
const count = Number(values.requests);
const IN_FLIGHT = Number(values['in-flight']);
if (!Number.isInteger(IN_FLIGHT) || IN_FLIGHT < 1 || IN_FLIGHT > count) {
  throw new Error('--in-flight must be a whole number from 1 to --requests.');
}

/** Sends `count` creates with ids from `firstId`, IN_FLIGHT at a time. */
const load = (url: string, firstId: number): Promise<void> => sendCreates(url, firstId, count, IN_FLIGHT);

const format = (instructions: number) => Math.round(instructions).toLocaleString('en');

const poll = async <T>(read: () => T | undefined, ms: number): Promise<T | undefined> => {
  const deadline = Date.now() + ms;
  let value = read();
  while (value === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = read();
  }
  return value;
};

/** The `totals:` (or `summary:`) line of a callgrind output file. */
const totalInstructions = (file: string): number => {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((text) => text.startsWith('totals:') || text.startsWith('summary:'));
  return Number(line?.split(/\s+/)[1]);
};

// (d) and (g) get a throwaway PostgreSQL (fsync on); its own processes are not counted here.
const postgres = keys.some((key) => key === 'd' || key === 'g') ? await openPostgres(process.env) : undefined;
if (typeof postgres === 'string') throw new Error(`PostgreSQL is not available: ${postgres}`);

/** Instructions per request by server: on the main (HTTP) thread, and on the process's other threads. */
const counted = new Map<ServerKey, { main: number; others: number }>();
/** Issue 19's bound on what one delivery may cost the HTTP thread. */
const MOST_PER_DELIVERY_ON_HTTP_THREAD = 100_000;

for (const target of createTargets(postgres).filter((candidate) => keys.includes(candidate.key))) {
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-instructions-'));
  const instance = await target.instance();
  // Under valgrind the event loop runs some fifty times slower: its delay bound would shed the very
  // requests being counted. The bound costs nothing per request, so nothing is left out.
  instance.command.env.PLANT_MAX_EVENT_LOOP_DELAY_MS = '0';
  // For the same reason, a kept-alive connection could time out between two of the load's requests
  // (ECONNRESET on a busy machine); its timer is set once per response whatever its length.
  instance.command.env.PLANT_HTTP_KEEP_ALIVE_TIMEOUT_MS = '60000';
  // And the PostgreSQL pool's first connection, made while the service starts, would time out.
  instance.command.env.PLANT_DB_CONNECT_TIMEOUT_MS = '60000';
  const server = await startServer(instance.command, join(dir, 'server.log'), {
    wrapper: [
      'valgrind',
      '--tool=callgrind',
      '--separate-threads=yes',
      // V8 writes and rewrites machine code as it runs.
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
    ],
    startTimeoutMs: 120_000,
  });
  try {
    await instance.prepare?.(server.url);
    /** Waits until the webhook receiver, if any, got `count` deliveries. */
    const deliveredAll = async (count: number) => {
      if (!instance.delivered) return;
      const got = await poll(() => ((instance.delivered?.() ?? 0) >= count ? true : undefined), 600_000);
      if (!got) throw new Error(`(${target.key}) delivered ${instance.delivered()} of ${count} webhooks`);
    };
    await load(server.url, 1);
    await deliveredAll(count);
    // vgdb names its pipes after USER and HOSTNAME: callgrind_control must see the server's environment.
    execFileSync('callgrind_control', ['-z', String(server.pid)], { stdio: 'ignore', env: instance.command.env });
    await load(server.url, 1_000_000_000);
    await deliveredAll(2 * count);
    execFileSync('callgrind_control', ['-d', String(server.pid)], { stdio: 'ignore', env: instance.command.env });
    // Thread 1 is the main (HTTP) thread; the dump after the zeroing is number 1. Valgrind writes it
    // when the process next checks for commands, which can be a moment after callgrind_control returns.
    const file = await poll(() => readdirSync(dir).find((name) => name.endsWith('.1-01')), 30_000);
    if (!file) throw new Error(`callgrind wrote no dump of the main thread in ${dir}`);
    // Every thread's part of that dump is written with it.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const otherFiles = readdirSync(dir).filter((name) => /\.1-\d+$/.test(name) && name !== file);
    const others = otherFiles.reduce((sum, name) => sum + totalInstructions(join(dir, name)), 0);
    if (values.threads) {
      // Callgrind numbers threads in the order they started: the HTTP thread is 1, V8's helpers
      // follow, then the SQLite thread and, once a plant was announced, the delivery thread.
      for (const name of otherFiles.sort()) {
        const perRequest = totalInstructions(join(dir, name)) / count;
        if (perRequest >= 1) console.log(`    thread ${Number(name.split('-').at(-1))}: ${format(perRequest)}`);
      }
    }
    const main = totalInstructions(join(dir, file)) / count;
    counted.set(target.key, { main, others: others / count });
    console.log(
      `(${target.key}) ${target.name}, ${IN_FLIGHT} in flight: ${format(main)} instructions per request on the main thread, ${format(others / count)} on its other threads`,
    );
  } finally {
    await server.stop();
    await instance.cleanup();
    if (values.keep) console.log(`(${target.key}) callgrind output kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
await postgres?.close();

const withDelivery = counted.get('e');
const without = counted.get('c');
if (withDelivery && without) {
  const onHttpThread = withDelivery.main - without.main;
  const inAll = withDelivery.main + withDelivery.others - (without.main + without.others);
  console.log(
    `per delivery, (e) less (c): ${format(onHttpThread)} instructions on the HTTP thread (target <= ${format(MOST_PER_DELIVERY_ON_HTTP_THREAD)}: ${onHttpThread <= MOST_PER_DELIVERY_ON_HTTP_THREAD ? 'met' : 'missed'}), ${format(inAll)} on all threads`,
  );
}
