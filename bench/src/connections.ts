/**
 * The connections scenario: our API (c) and the default peer (b) under wrk at 50, 1,000, 4,000 and
 * 10,000 connections, each level on a fresh process. Per level: 2xx/s, 503/s (our API sheds what
 * it cannot hold), p99 of all answers as wrk saw them, the p99 bucket of admitted creates from our
 * API's own histogram, the slowest /healthz on a kept-alive and on a new connection while loaded
 * (the peer has none: its 404 for that path is timed instead),
 * peak RSS, and whether the process survived. Prints figures; fails only when the harness does
 * not work, never on a figure.
 *
 *   pnpm --filter @org/plant-bench connections [--smoke] [--levels 50,1000,4000,10000] [--duration 8] [--servers b,c]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '@org/plant-api/testing/free-port';
import { describeMachine, machineLine } from './machine.ts';
import { startServer } from './server-process.ts';
import { BENCH_TOKEN, createTargets, type Target } from './targets.ts';
import { ensureWrk, fileLimitWrapper, runWrk } from './wrk.ts';

export type LevelResult = {
  server: string;
  connections: number;
  okPerSec: number;
  shedPerSec: number;
  /** Answers neither 2xx nor 503, socket errors and timeouts: a server that holds has none. */
  otherFailures: number;
  p99Ms: number;
  /** Our API only: the upper bound of the histogram bucket holding the 99th percentile of admitted creates. */
  admittedP99Ms?: number;
  healthKeptAliveMaxMs: number;
  healthNewConnectionMaxMs: number;
  /** Our API only: the slowest /healthz on a new connection to its metrics port (PLANT_METRICS_PORT). */
  healthMetricsPortMaxMs?: number;
  peakRssMiB: number;
  survived: boolean;
};

const PROBE_EVERY_MS = 250;
const PROBE_TIMEOUT_MS = 10_000;

type Probe = { status: number | undefined; ms: number; body: string };

const get = (url: string, agent: Agent | false): Promise<Probe> =>
  new Promise((resolve) => {
    const started = performance.now();
    const req = request(url, { agent, timeout: PROBE_TIMEOUT_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: undefined, ms: performance.now() - started, body: '' }));
    req.end();
  });

/** The 99th percentile's bucket of `http_request_duration_seconds` for POST /plants answered 200. */
const admittedP99Ms = (metrics: string): number | undefined => {
  const buckets = [
    ...metrics.matchAll(
      /^http_request_duration_seconds_bucket\{le="([^"]+)",method="POST",route="\/plants",status="200"\} (\d+)$/gm,
    ),
  ].map((match) => ({ le: Number(match[1]), count: Number(match[2]) }));
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return undefined;
  return (buckets.find((bucket) => bucket.count >= total * 0.99)?.le ?? Number.POSITIVE_INFINITY) * 1000;
};

const runLevel = async (target: Target, connections: number, seconds: number, firstId: number) => {
  const instance = await target.instance();
  // Our API as the README recommends deploying it: probes and scrapes on a metrics port of their
  // own, outside the API port's accept queue and admission bounds.
  const metricsPort = target.key === 'c' ? await freePort() : undefined;
  if (metricsPort !== undefined) {
    instance.command.env = { ...instance.command.env, PLANT_METRICS_PORT: String(metricsPort) };
  }
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-connections-'));
  const files = connections + 1_000;
  const server = await startServer(instance.command, join(dir, 'server.log'), { wrapper: fileLimitWrapper(files) });
  try {
    const url = server.url;
    const opsUrl = metricsPort === undefined ? url : `http://127.0.0.1:${metricsPort}`;
    const keptAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(`${url}/healthz`, keptAlive);
    let loading = true;
    const probes = { keptAlive: [] as Probe[], fresh: [] as Probe[], metricsPort: [] as Probe[] };
    const probe = async (base: string, agent: Agent | false, into: Probe[]) => {
      while (loading) {
        into.push(await get(`${base}/healthz`, agent));
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
      }
    };
    const probing = Promise.all([
      probe(url, keptAlive, probes.keptAlive),
      probe(url, false, probes.fresh),
      metricsPort !== undefined && probe(opsUrl, false, probes.metricsPort),
    ]);
    const result = await runWrk({ url, token: BENCH_TOKEN, connections, threads: 1, seconds, firstId }).finally(() => {
      loading = false;
    });
    await probing;
    keptAlive.destroy();
    // The peer has no /healthz: any answer (its 404) shows it alive, and times the way in.
    const answered = (probe: Probe) => (target.key === 'c' ? probe.status === 200 : probe.status !== undefined);
    const alive = answered(await get(`${url}/healthz`, false));
    const peakRssMiB = alive ? server.peakRss() / 2 ** 20 : Number.NaN;
    const metrics = alive && target.key === 'c' ? (await get(`${opsUrl}/metrics`, false)).body : '';
    const shed = [...metrics.matchAll(/^plant_http_requests_shed_total\{reason="\w+"\} (\d+)$/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
    const durationS = result.durationUs / 1e6;
    // wrk counts every non-2xx alike; our API's own counter says how many of them were shed.
    const shedAnswers = target.key === 'c' ? Math.min(shed, result.non2xx) : 0;
    const slowest = (list: Probe[]) =>
      list.length === 0 ? Number.NaN : Math.max(...list.map((p) => (answered(p) ? p.ms : PROBE_TIMEOUT_MS)));
    const level: LevelResult = {
      server: `(${target.key}) ${target.name}`,
      connections,
      okPerSec: (result.requests - result.non2xx) / durationS,
      shedPerSec: shedAnswers / durationS,
      otherFailures:
        result.non2xx - shedAnswers + result.connectErrors + result.readErrors + result.writeErrors + result.timeouts,
      p99Ms: result.p99Us / 1000,
      healthKeptAliveMaxMs: slowest(probes.keptAlive),
      healthNewConnectionMaxMs: slowest(probes.fresh),
      peakRssMiB,
      survived: alive,
    };
    if (metricsPort !== undefined) level.healthMetricsPortMaxMs = slowest(probes.metricsPort);
    const admitted = admittedP99Ms(metrics);
    if (admitted !== undefined) level.admittedP99Ms = admitted;
    return level;
  } finally {
    await server.stop();
    await instance.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
};

const formatLevels = (levels: LevelResult[]): string => {
  const rows = levels.map((l) => [
    l.server,
    String(l.connections),
    l.okPerSec.toFixed(0),
    l.shedPerSec.toFixed(0),
    String(l.otherFailures),
    l.p99Ms.toFixed(0),
    l.admittedP99Ms === undefined ? '–' : `≤ ${l.admittedP99Ms}`,
    `${l.healthKeptAliveMaxMs.toFixed(0)} / ${l.healthNewConnectionMaxMs.toFixed(0)}`,
    l.healthMetricsPortMaxMs === undefined ? '–' : l.healthMetricsPortMaxMs.toFixed(0),
    l.peakRssMiB.toFixed(0),
    l.survived ? 'yes' : 'NO',
  ]);
  const head = [
    'server',
    'conns',
    '2xx/s',
    '503/s',
    'other',
    'p99 ms',
    'admitted p99 ms',
    '/healthz max ms (kept / new)',
    'metrics port /healthz max ms (new)',
    'peak RSS MiB',
    'survived',
  ];
  const widths = head.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]?.length ?? 0)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
};

/** Every level for our API and the peer, interleaved so that drift on a shared machine hits both. */
export const runConnectionsScenario = async (
  { levels, seconds, servers = ['b', 'c'] }: { levels: number[]; seconds: number; servers?: string[] },
  log: (line: string) => void,
): Promise<LevelResult[]> => {
  ensureWrk();
  const targets = createTargets(undefined).filter(
    (target) => (target.key === 'b' || target.key === 'c') && servers.includes(target.key),
  );
  const results: LevelResult[] = [];
  let firstId = 5_000_000_000;
  for (const connections of levels) {
    for (const target of targets) {
      const level = await runLevel(target, connections, seconds, firstId);
      firstId += 1_000_000_000;
      results.push(level);
      log(
        `${level.server} at ${connections} connections: ${level.okPerSec.toFixed(0)} 2xx/s, ${level.shedPerSec.toFixed(0)} 503/s, ${level.otherFailures} other, peak RSS ${level.peakRssMiB.toFixed(0)} MiB, ${level.survived ? 'survived' : 'DIED'}`,
      );
    }
  }
  log('');
  log(formatLevels(results));
  const ours = (connections: number) =>
    results.find((level) => level.server.startsWith('(c)') && level.connections === connections);
  const base = ours(levels[0] ?? 50);
  for (const connections of levels.slice(1)) {
    const level = ours(connections);
    if (base && level) {
      log(
        `(c) 2xx/s at ${connections} connections: ${(level.okPerSec / base.okPerSec).toFixed(2)}× the ${base.connections}-connection figure`,
      );
    }
  }
  return results;
};

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean' },
      levels: { type: 'string' },
      duration: { type: 'string' },
      // Only some of the two servers, e.g. `--servers c` while trying a setting of ours.
      servers: { type: 'string', default: 'b,c' },
    },
  });
  const smoke = values.smoke === true || (process.env.BENCH_SMOKE !== undefined && process.env.BENCH_SMOKE !== '0');
  const levels = (values.levels ?? (smoke ? '50,1000' : '50,1000,4000,10000')).split(',').map(Number);
  const seconds = Number(values.duration ?? (smoke ? 1 : 8));
  if (levels.some((level) => !Number.isInteger(level) || level < 1) || !(seconds >= 1)) {
    console.error('--levels takes whole numbers of connections, --duration whole seconds.');
    process.exit(2);
  }
  const machine = describeMachine();
  console.log(`machine: ${machineLine(machine)}, load average ${machine.loadAverage}`);
  console.log(
    `${smoke ? 'SMOKE run (figures mean nothing): ' : ''}levels ${levels.join(', ')} connections, ${seconds} s each, wrk 1 thread`,
  );
  await runConnectionsScenario({ levels, seconds, servers: values.servers.split(',') }, (line) => console.log(line));
}
