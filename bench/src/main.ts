/**
 * pnpm bench: POST /plants on (a) bare node:http, (b) a default @ts-rest/express peer, (c) our API
 * on the embedded store and (d) on PostgreSQL, each its own process, loaded by wrk from another
 * process in alternating rounds; then cold starts and the client's overhead. Prints a table and
 * writes latest.json and latest.svg. Figures are ratios against servers measured in the same run,
 * and nothing here fails on a slow figure: only on a harness that does not work.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClientBenchInput, ClientBenchResult } from './client-overhead.ts';
import { runConnectionsScenario } from './connections.ts';
import { describeMachine, machineLine } from './machine.ts';
import { type BenchOptions, parseOptions, type ServerKey, USAGE } from './options.ts';
import { openPostgres, type Postgres } from './postgres.ts';
import {
  type ClientResult,
  checkTargets,
  deliveredDuringLoad,
  formatTable,
  type Report,
  type RoundResult,
  renderReportChart,
  type ServerResult,
  toJson,
  updateReadme,
} from './report.ts';
import { measureColdStart, post, type RunningServer, startServer } from './server-process.ts';
import { median } from './stats.ts';
import {
  BENCH_HEADERS,
  BENCH_TOKEN,
  createTargets,
  type Instance,
  NAMES,
  plantBody,
  REPO_ROOT,
  type Target,
} from './targets.ts';
import { ensureWrk, runWrk } from './wrk.ts';

const MIB = 2 ** 20;
/** Each phase sends ids from its own block, so every POST creates a new plant. */
const ID_BLOCK = 1_000_000_000;

const log = (line: string) => console.log(line);

type Live = { target: Target; instance: Instance; server: RunningServer; answered: number; rounds: RoundResult[] };

const commit = (): string | undefined => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
};

const coldStarts = async (targets: Target[], count: number): Promise<Map<ServerKey, number[]>> => {
  const samples = new Map<ServerKey, number[]>(targets.map((target) => [target.key, []]));
  for (let index = 0; index < count; index += 1) {
    for (const target of targets) {
      const instance = await target.instance();
      try {
        const ms = await measureColdStart(instance.command, { headers: BENCH_HEADERS, body: plantBody(1) });
        samples.get(target.key)?.push(ms);
      } finally {
        await instance.cleanup();
      }
    }
  }
  return samples;
};

/** Starts every target, adding each to `live` as soon as it runs so that a failure still stops it. */
const startAll = async (targets: Target[], logDir: string, live: Live[]): Promise<void> => {
  for (const target of targets) {
    const instance = await target.instance();
    const server = await startServer(instance.command, join(logDir, `${target.key}.log`)).catch(async (error) => {
      await instance.cleanup();
      throw error;
    });
    const entry: Live = { target, instance, server, answered: 0, rounds: [] };
    live.push(entry);
    await instance.prepare?.(server.url);
    // A wrong answer here would make every figure after it meaningless.
    const answer = await post(`${server.url}/plants`, BENCH_HEADERS, plantBody(0));
    if (answer.status !== 200 || JSON.parse(answer.body).name !== 'Monstera deliciosa') {
      throw new Error(`(${target.key}) answered POST /plants with ${answer.status} ${answer.body}`);
    }
    entry.answered = 1;
  }
};

const load = async (entry: Live, options: BenchOptions, seconds: number, firstId: number) => {
  const result = await runWrk({
    url: entry.server.url,
    token: BENCH_TOKEN,
    connections: options.connections,
    threads: options.threads,
    seconds,
    firstId,
  });
  const failures = result.non2xx + result.connectErrors + result.readErrors + result.writeErrors + result.timeouts;
  if (failures > 0) {
    throw new Error(
      `(${entry.target.key}) ${entry.target.name}: ${result.non2xx} non-2xx answers, ${result.connectErrors}/${result.readErrors}/${result.writeErrors} connect/read/write errors, ${result.timeouts} timeouts out of ${result.requests}:\n${entry.server.output()}`,
    );
  }
  entry.answered += result.requests;
  return result;
};

/** How long (e)'s backlog may take to reach its receiver after a round before the run fails. */
const DRAIN_LIMIT_MS = 600_000;

/**
 * A load and, on a server with a webhook subscriber ((e)), the share of its creates delivered while
 * it ran, then a wait until every plant was delivered. Draining here, unmeasured, keeps the backlog
 * out of the next server's round, where it would slow that server and flatter (e)'s ratio to it.
 */
const loadAndDrain = async (entry: Live, options: BenchOptions, seconds: number, firstId: number) => {
  const delivered = entry.instance.delivered;
  const before = delivered?.();
  const result = await load(entry, options, seconds, firstId);
  if (!delivered || before === undefined) return result;
  const deliveredShare = (delivered() - before) / result.requests;
  const backlog = entry.answered - delivered();
  const started = performance.now();
  while (delivered() < entry.answered) {
    if (performance.now() - started > DRAIN_LIMIT_MS) {
      throw new Error(`(${entry.target.key}) delivered ${delivered()} of ${entry.answered} plants`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const drainSeconds = (performance.now() - started) / 1000;
  return { ...result, deliveredShare, drainPerSec: backlog / Math.max(drainSeconds, 0.02) };
};

/** Median over rounds of x_r / ref_r: each round's servers ran next to each other in time. */
const ratio = (entry: Live, reference: Live | undefined): number | undefined => {
  if (!reference || reference.rounds.length !== entry.rounds.length) return undefined;
  return median(entry.rounds.map((r, index) => r.reqPerSec / (reference.rounds[index]?.reqPerSec ?? Number.NaN)));
};

const clientOverhead = async (entry: Live, options: BenchOptions, concurrency: number, firstId: number) => {
  const input: ClientBenchInput = {
    url: entry.server.url,
    token: BENCH_TOKEN,
    concurrency,
    batches: options.clientBatches,
    batchSize: options.clientBatchSize,
    firstId,
  };
  const script = fileURLToPath(new URL('./client-overhead.ts', import.meta.url));
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(input)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`client benchmark exited ${code}`))));
  });
  const result = JSON.parse(output.trim().split('\n').at(-1) ?? '') as ClientBenchResult;
  entry.answered += result.requests + 2 * options.clientBatchSize;
  return { ...result, server: entry.target.key } satisfies ClientResult;
};

const run = async (options: BenchOptions): Promise<boolean> => {
  const started = performance.now();
  ensureWrk();
  const machine = describeMachine();
  log(`machine: ${machineLine(machine)}, load average ${machine.loadAverage}`);
  log(
    `${options.smoke ? 'SMOKE run (figures mean nothing): ' : ''}${options.rounds} round(s) × ${options.duration} s, ${options.warmup} s warm-up, ${options.connections} connections, ${options.threads} wrk thread(s)`,
  );

  const skipped: Report['skipped'] = [];
  let postgres: Postgres | undefined;
  const onPostgres = options.only.filter((key) => key === 'd' || key === 'g');
  if (onPostgres.length > 0) {
    const opened = await openPostgres(process.env).catch(
      (error: Error) => `PostgreSQL could not be started: ${error.message.split('\n')[0]}`,
    );
    if (typeof opened === 'string') {
      for (const key of onPostgres) {
        skipped.push({ key, name: NAMES[key], reason: opened });
        log(`(${key}) ${NAMES[key]}: skipped, ${opened}`);
      }
    } else {
      postgres = opened;
      log(`(${onPostgres.join(', ')}) PostgreSQL: ${postgres.source}`);
    }
  }
  const targets = createTargets(postgres).filter((target) => options.only.includes(target.key));
  const logDir = mkdtempSync(join(tmpdir(), 'plant-bench-logs-'));
  const live: Live[] = [];
  let succeeded = false;
  try {
    log(`cold starts (${options.coldStarts} per server)…`);
    const cold = await coldStarts(targets, options.coldStarts);

    await startAll(targets, logDir, live);
    if (options.warmup > 0) {
      log(`warm-up (${options.warmup} s per server)…`);
      for (const entry of live) await loadAndDrain(entry, options, options.warmup, 1);
    }
    for (let index = 1; index <= options.rounds; index += 1) {
      const line: string[] = [];
      for (const entry of live) {
        const result = await loadAndDrain(entry, options, options.duration, index * ID_BLOCK);
        const reqPerSec = result.requests / (result.durationUs / 1e6);
        entry.rounds.push({ ...result, round: index, reqPerSec });
        const share = 'deliveredShare' in result ? `, ${deliveredDuringLoad(result.deliveredShare)}` : '';
        line.push(
          `(${entry.target.key}) ${reqPerSec.toFixed(0)} req/s p99 ${(result.p99Us / 1000).toFixed(2)} ms${share}`,
        );
      }
      log(`round ${index}/${options.rounds}: ${line.join(' · ')}`);
    }
    const peaks = new Map(live.map((entry) => [entry.target.key, entry.server.peakRss()]));

    const client: ClientResult[] = [];
    for (const key of ['a', 'c'] as const) {
      const entry = live.find((candidate) => candidate.target.key === key);
      if (!entry) continue;
      for (const concurrency of [1, 10]) {
        log(`client overhead on (${key}), ${concurrency} in flight…`);
        client.push(await clientOverhead(entry, options, concurrency, (options.rounds + 1 + client.length) * ID_BLOCK));
      }
    }

    const stored = new Map<ServerKey, number | undefined>();
    for (const entry of live) {
      await entry.server.stop();
      stored.set(entry.target.key, await entry.instance.storedPlants());
    }

    const byKey = (key: ServerKey) => live.find((entry) => entry.target.key === key);
    const servers: ServerResult[] = live.map((entry) => {
      const result: ServerResult = {
        key: entry.target.key,
        name: entry.target.name,
        rounds: entry.rounds,
        reqPerSec: median(entry.rounds.map((r) => r.reqPerSec)),
        p50Ms: median(entry.rounds.map((r) => r.p50Us / 1000)),
        p99Ms: median(entry.rounds.map((r) => r.p99Us / 1000)),
        peakRssMiB: (peaks.get(entry.target.key) ?? Number.NaN) / MIB,
        coldStartMs: median(cold.get(entry.target.key) ?? []),
        coldStartSamplesMs: cold.get(entry.target.key) ?? [],
        answered: entry.answered,
      };
      const shares = entry.rounds.flatMap((r) => (r.deliveredShare === undefined ? [] : [r.deliveredShare]));
      if (shares.length > 0) result.deliveredShare = median(shares);
      const toA = ratio(entry, byKey('a'));
      const toB = ratio(entry, byKey('b'));
      if (toA !== undefined) result.ratioToA = toA;
      if (toB !== undefined) result.ratioToB = toB;
      // (e) and (d) are our API on another path than (c); (d) is also held against its own peer (g).
      const toC = ['d', 'e'].includes(entry.target.key) ? ratio(entry, byKey('c')) : undefined;
      if (toC !== undefined) result.ratioToC = toC;
      const toG = entry.target.key === 'd' ? ratio(entry, byKey('g')) : undefined;
      if (toG !== undefined) result.ratioToG = toG;
      const plants = stored.get(entry.target.key);
      if (plants !== undefined) result.storedPlants = plants;
      return result;
    });

    const report: Report = {
      generatedAt: new Date().toISOString(),
      mode: options.smoke ? 'smoke' : 'full',
      machine,
      commit: commit(),
      settings: {
        rounds: options.rounds,
        secondsPerRound: options.duration,
        warmupSeconds: options.warmup,
        connections: options.connections,
        wrkThreads: options.threads,
        coldStarts: options.coldStarts,
        loadGenerator: `wrk (${options.threads} thread${options.threads === 1 ? '' : 's'})`,
      },
      servers,
      skipped,
      targets: checkTargets(servers, client),
      client,
    };

    log('');
    if (options.smoke) log('SMOKE: 1-second rounds without warm-up; these figures only prove that everything ran.');
    log(formatTable(report));
    const lost = servers.filter((s) => s.storedPlants !== undefined && s.storedPlants < s.answered);
    for (const s of lost) log(`(${s.key}) answered ${s.answered} creates with 200 but stored only ${s.storedPlants}!`);

    // Relative to where `pnpm bench` was typed, not to bench/ where pnpm runs the script.
    const outDir = options.out
      ? resolve(process.env.INIT_CWD ?? process.cwd(), options.out)
      : options.smoke
        ? join(logDir, 'results')
        : join(REPO_ROOT, 'bench', 'results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'latest.json'), `${toJson(report)}\n`);
    writeFileSync(join(outDir, 'latest.svg'), renderReportChart(report));
    log('');
    log(`wrote ${join(outDir, 'latest.json')} and latest.svg`);
    if (options.connectionLevels.length > 0) {
      log('');
      log(
        `connections scenario: (b) and (c) at ${options.connectionLevels.join(', ')} connections, ${options.duration} s each…`,
      );
      const levels = await runConnectionsScenario({ levels: options.connectionLevels, seconds: options.duration }, log);
      writeFileSync(join(outDir, 'connections.json'), `${JSON.stringify(levels, null, 2)}\n`);
      log(`wrote ${join(outDir, 'connections.json')}`);
    }
    if (options.readme) {
      const readme = join(REPO_ROOT, 'bench', 'README.md');
      log(updateReadme(readme, report) ? `updated the figures in ${readme}` : `no bench markers in ${readme}`);
    }
    log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    succeeded = lost.length === 0;
    return succeeded;
  } finally {
    for (const entry of live) {
      await entry.server.stop();
      await entry.instance.cleanup();
    }
    await postgres?.close();
    if (!succeeded) log(`server logs: ${logDir}`);
    else if (!options.smoke) rmSync(logDir, { recursive: true, force: true });
  }
};

try {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (options === 'help') {
    console.log(USAGE);
  } else if (!(await run(options))) {
    process.exitCode = 1;
  }
} catch (error) {
  console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
