import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectOutput } from '#test/child-output';
import { httpRequest, postPlant } from '#test/http-request';
import type { LoadSummary } from '#test/keep-alive-load';
import { logLines } from '#test/main-process';

const API_DIR = join(import.meta.dirname, '..');
const LOAD = join(import.meta.dirname, 'support', 'keep-alive-load.ts');
const TOKEN = 'surge-test-token-0123456789abcdef';
const CONNECTIONS = 4_000;
const LOAD_MS = 4_000;
// Each side holds one descriptor per connection, plus its own (modules, the database, pipes).
const FILES_NEEDED = CONNECTIONS + 1_000;

/** `pnpm start`'s own command line, read from the package so that this test cannot drift from it. */
const startArgs = (): string[] => {
  const { scripts } = JSON.parse(readFileSync(join(API_DIR, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [program, ...args] = (scripts.start ?? '').trim().split(/\s+/);
  if (program !== 'node') throw new Error(`apps/api's start script must run node (got ${scripts.start})`);
  return args;
};

/**
 * Runs node with its open-file limit raised to what the surge needs (an unprivileged process may
 * raise it up to the hard limit), as a service manager's LimitNOFILE would.
 */
const spawnWithFiles = (args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) =>
  spawn(
    '/bin/sh',
    [
      '-c',
      `ulimit -n ${FILES_NEEDED} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"`,
      process.execPath,
      ...args,
    ],
    { ...options, stdio: ['pipe', 'pipe', 'pipe'] },
  );

const openFileLimit = (pid: number): number =>
  Number(/^Max open files\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))?.[1] ?? 0);

const peakRssMiB = (pid: number): number =>
  Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const dataDir = mkdtempSync(join(tmpdir(), 'plant-surge-test-'));
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  await promisify(execFile)(process.execPath, ['scripts/build.ts'], { cwd: API_DIR });
}, 60_000);

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

describe('a surge of connections against the built service', () => {
  it(`stays alive with pnpm start's flags and default bounds: ${CONNECTIONS} connections creating at once get 200 or 503, /healthz answers throughout`, async (context) => {
    const server = spawnWithFiles(startArgs(), {
      cwd: API_DIR,
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: '0',
        PLANT_DATA_DIR: dataDir,
        PLANT_API_TOKENS: TOKEN,
        // One token for the whole surge: the per-token limit would answer most of it 429.
        PLANT_RATE_LIMIT_PER_TOKEN: '0',
        PLANT_SHUTDOWN_DRAIN_MS: '0',
        // Read after the surge, on the one port.
        PLANT_METRICS_ON_API_PORT: 'true',
      },
    });
    children.push(server);
    const output = collectOutput(server);
    const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
    let url: string | undefined;
    for (const deadline = Date.now() + 15_000; url === undefined; ) {
      url = logLines(output.stdout()).find((line) => line.msg === 'plant store listening')?.url;
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`Not listening: ${output.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const pid = server.pid as number;
    if (openFileLimit(pid) < FILES_NEEDED) {
      context.skip(`the hard limit on open files is below ${FILES_NEEDED}; raise it (ulimit -Hn) to run this test`);
    }

    // The probe's connection is open before the surge, as a load balancer's would be.
    const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await httpRequest(`${url}/healthz`, { agent: probeAgent })).status).toBe(200);

    const load = spawnWithFiles([LOAD, url, TOKEN, String(CONNECTIONS), String(LOAD_MS), '1000000'], {
      cwd: API_DIR,
      env: { PATH: process.env.PATH },
    });
    children.push(load);
    const loadOutput = collectOutput(load);
    const summary = new Promise<LoadSummary>((resolve, reject) =>
      load.once('exit', (code) => {
        const last = loadOutput.stdout().trim().split('\n').at(-1) ?? '';
        if (code === 0 && last.startsWith('{"statuses"')) resolve(JSON.parse(last) as LoadSummary);
        else reject(new Error(`The load generator exited ${code}: ${loadOutput.stdout()}\n${loadOutput.stderr()}`));
      }),
    );
    let loading = true;
    void summary.finally(() => {
      loading = false;
    });

    const probes: { status: number; ms: number }[] = [];
    while (loading) {
      const started = performance.now();
      // Answered, however late a busy machine makes it: the surge must not starve the probe for good.
      const answer = await httpRequest(`${url}/healthz`, { agent: probeAgent, timeoutMs: 30_000 });
      probes.push({ status: answer.status, ms: Math.round(performance.now() - started) });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const { statuses, failed, failures } = await summary;
    probeAgent.destroy();

    expect(server.exitCode, output.stderr()).toBeNull();
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.every((probe) => probe.status === 200)).toBe(true);
    expect(failures).toStrictEqual([]);
    expect(failed).toBe(0);
    expect(Object.keys(statuses).every((status) => status === '200' || status === '503')).toBe(true);
    expect(statuses['200']).toBeGreaterThan(0);
    const peak = peakRssMiB(pid);
    expect(peak).toBeLessThan(256);

    // Served again once the surge is over; what was shed was counted.
    expect((await postPlant(url, TOKEN, { id: 1n, name: 'After the surge' }, { agent: false })).status).toBe(200);
    const metrics = await httpRequest(`${url}/metrics`, { agent: false });
    const shed = [...metrics.text.matchAll(/^plant_http_requests_shed_total\{reason="(\w+)"\} (\d+)$/gm)].reduce(
      (sum, match) => sum + Number(match[2]),
      0,
    );
    expect(shed).toBe(statuses['503'] ?? 0);
    console.info(
      `surge: ${CONNECTIONS} connections for ${LOAD_MS} ms: ${statuses['200']} answered 200, ${statuses['503'] ?? 0} shed (503); ` +
        `/healthz ${probes.length} probes, slowest ${Math.max(...probes.map((probe) => probe.ms))} ms; peak RSS ${peak.toFixed(0)} MiB`,
    );

    server.kill('SIGTERM');
    expect(await exited).toBe(0);
    // Four seconds of surge, each request answered within 30 s: a safety net for a busy machine.
  }, 120_000);
});
