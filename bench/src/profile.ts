/**
 * Where our API spends its time under load: runs one server of the benchmark with `--cpu-prof`,
 * loads it with wrk as `pnpm bench` does, stops it, and prints self and total time by package,
 * file and function, for each of its threads (HTTP, SQLite, delivery). With --cold, profiles a cold
 * start (spawn to the first 200) instead. The .cpuprofile files are kept for Chrome DevTools or speedscope.
 *
 *   pnpm --filter @org/plant-bench profile [--server c] [--duration 10] [--connections 50] [--cold]
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CpuProfile, formatSummary, summarizeProfile } from './cpu-profile.ts';
import type { ServerKey } from './options.ts';
import { openPostgres, type Postgres } from './postgres.ts';
import { parseScriptArgs } from './script-args.ts';
import { measureColdStart, type RunningServer, startServer } from './server-process.ts';
import { BENCH_HEADERS, BENCH_TOKEN, createTargets, plantBody, REPO_ROOT } from './targets.ts';
import { ensureWrk, runWrk } from './wrk.ts';

const values = parseScriptArgs({ server: 'c', duration: '10', connections: '50', interval: '250', top: '25' }, [
  'cold',
]);
const key = values.server as ServerKey;
const seconds = Number(values.duration);

ensureWrk();
let postgres: Postgres | undefined;
if (key === 'd' || key === 'g') {
  const opened = await openPostgres(process.env);
  if (typeof opened === 'string') throw new Error(`(d) is not available: ${opened}`);
  postgres = opened;
}
const target = createTargets(postgres).find((candidate) => candidate.key === key);
if (!target) throw new Error(`--server must be one of a, b, c, d, e, g (got ${key}).`);

const dir = mkdtempSync(join(tmpdir(), 'plant-bench-profile-'));
const instance = await target.instance([
  '--cpu-prof',
  `--cpu-prof-dir=${dir}`,
  `--cpu-prof-interval=${Number(values.interval)}`,
]);
let server: RunningServer | undefined;
/** The thread id in a profile's name, `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`. */
const threadOf = (file: string): number => Number(file.split('.').at(-3));
try {
  if (values.cold) {
    const ms = await measureColdStart(instance.command, { headers: BENCH_HEADERS, body: plantBody(1) });
    console.log(`(${key}) ${target.name}: cold start to the first 200 in ${ms.toFixed(0)} ms under --cpu-prof`);
  } else {
    server = await startServer(instance.command, join(dir, 'server.log'));
    // (e) subscribes its receiver here: without it, nothing would be announced or delivered.
    await instance.prepare?.(server.url);
    const result = await runWrk({
      url: server.url,
      token: BENCH_TOKEN,
      connections: Number(values.connections),
      threads: 1,
      seconds,
      firstId: 1,
    });
    await server.stop();
    const reqPerSec = result.requests / (result.durationUs / 1e6);
    console.log(
      `(${key}) ${target.name} under --cpu-prof: ${reqPerSec.toFixed(0)} req/s, p99 ${(result.p99Us / 1000).toFixed(2)} ms, ${result.non2xx} non-2xx`,
    );
  }
  // One profile per thread: the HTTP thread's first (thread 0), then the SQLite and delivery threads.
  const files = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort((a, b) => threadOf(a) - threadOf(b));
  if (files.length === 0) throw new Error(`no .cpuprofile was written in ${dir}`);
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
    console.log(`\n== thread ${threadOf(file)}${threadOf(file) === 0 ? ' (HTTP)' : ''}: ${file}\n`);
    console.log(formatSummary(summarizeProfile(profile, REPO_ROOT, Number(values.top))));
  }
  console.log(`\nprofiles: ${dir} (open in Chrome DevTools › Performance, or speedscope)`);
} finally {
  await server?.stop();
  await instance.cleanup();
  await postgres?.close();
}
