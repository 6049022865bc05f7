/**
 * Instructions per POST /plants on a server's main thread, counted by callgrind: a figure that does
 * not move with the machine's load, so a change of a few percent shows where throughput on a shared
 * machine cannot. Each server runs under valgrind; after a warm-up of `--requests` creates its
 * counters are zeroed, the same number is sent again (10 in flight, keep-alive), and the main
 * thread's count is divided by it. For a server that announces plants to a webhook receiver (e), the
 * counters are zeroed and dumped only once the receiver got every delivery so far, so the count
 * holds exactly one delivery per create: (e) less (c) is what a delivery costs the HTTP thread.
 * Slow (about 40 s a server, more for (e)); never part of `pnpm bench`.
 * `--in-flight` sets how many connections load it at once: what a request costs with thousands of
 * others alive (garbage collection, per-connection work) shows here without the machine's noise.
 *
 *   pnpm --filter @org/plant-bench instructions [--server b,c] [--requests 2000] [--in-flight 10] [--keep]
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
    server: { type: 'string', default: 'b,c' },
    requests: { type: 'string', default: '2000' },
    'in-flight': { type: 'string', default: '10' },
    // Keeps callgrind's output (and prints where) for callgrind_annotate.
    keep: { type: 'boolean', default: false },
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

for (const target of createTargets(postgres).filter((candidate) => keys.includes(candidate.key))) {
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-instructions-'));
  const instance = await target.instance();
  // Under valgrind the event loop runs some fifty times slower: its delay bound would shed the very
  // requests being counted. The bound costs nothing per request, so nothing is left out.
  instance.command.env.PLANT_MAX_EVENT_LOOP_DELAY_MS = '0';
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
    const others = readdirSync(dir)
      .filter((name) => /\.1-\d+$/.test(name) && name !== file)
      .reduce((sum, name) => sum + totalInstructions(join(dir, name)), 0);
    const format = (instructions: number) => Math.round(instructions / count).toLocaleString('en');
    console.log(
      `(${target.key}) ${target.name}, ${IN_FLIGHT} in flight: ${format(totalInstructions(join(dir, file)))} instructions per request on the main thread, ${format(others)} on its other threads`,
    );
  } finally {
    await server.stop();
    await instance.cleanup();
    if (values.keep) console.log(`(${target.key}) callgrind output kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
await postgres?.close();
