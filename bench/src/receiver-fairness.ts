/**
 * How promptly a healthy webhook receiver is served beside bad ones (issue 36: p99 at most 1 s
 * beside 1, 4 and 16 receivers that hang, answer slowly or refuse connections). Each run starts
 * our API (c) on a fresh data directory with the default attempt timeout, subscribes the bad
 * receivers, then the healthy one (answering 204 at once), creates `--plants` plants at `--rate`
 * a second, one request each at its time, and waits for the healthy receiver's last delivery (at
 * most 20 s after the last create). It prints the healthy receiver's delivery latency (from each
 * create's send to its arrival) p50 / p99 / max, and how many arrived within those 20 s; first
 * alone, as the baseline of the same run. Printed, never gated; run it on a quiet machine.
 *
 *   pnpm --filter @org/plant-bench receiver-fairness [--plants 200] [--rate 20] [--bad 1,4,16]
 *     [--kinds hang,slow,refuse] [--smoke]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { percentile, sendSteadily } from '../../apps/api/test/support/steady-sends.ts';
import { create, subscribe } from './receiver-load.ts';
import { numberList, parseScriptArgs } from './script-args.ts';
import { startServer } from './server-process.ts';
import { API_DIR, API_SERVICE, apiEnv } from './targets.ts';

type Kind = 'hang' | 'slow' | 'refuse';

const values = parseScriptArgs(
  { plants: '200', rate: '20', bad: '1,4,16', kinds: 'hang,slow,refuse' },
  // 20 plants beside 1 and 16 bad receivers of each kind: proves the scenario runs, measures nothing.
  ['smoke'],
);
const PLANTS = values.smoke ? 20 : Number(values.plants);
const RATE = Number(values.rate);
const COUNTS = numberList(values.smoke ? '1,16' : values.bad);
const KINDS = values.kinds.split(',') as Kind[];
for (const kind of KINDS) if (!['hang', 'slow', 'refuse'].includes(kind)) throw new Error(`Unknown kind ${kind}.`);
/** How long after the last create the healthy receiver's deliveries are waited for (the issue's window). */
const WAIT_AFTER_MS = 20_000;
/** A slow receiver answers 204 this long after a delivery arrives: past the slow mark, within the timeout. */
const SLOW_ANSWER_MS = 3_000;

type Receiver = { url: string; close(): Promise<void> };

/** A receiver of the given kind on loopback; `onPlant` hears the id of each delivery that arrives. */
const startReceiver = async (kind: Kind | 'healthy', onPlant?: (id: number) => void): Promise<Receiver> => {
  const open: ServerResponse[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (kind === 'healthy') {
        onPlant?.((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number }).id);
        res.writeHead(204).end();
      } else if (kind === 'slow') {
        const timer = setTimeout(() => {
          timers.delete(timer);
          res.writeHead(204).end();
        }, SLOW_ANSWER_MS);
        timers.add(timer);
      } else open.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () => {
    for (const timer of timers) clearTimeout(timer);
    for (const res of open.splice(0)) res.destroy();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  // Refusing: the port is given back at once, so connections to it are refused.
  if (kind === 'refuse') await close();
  return { url: `http://127.0.0.1:${port}/hook`, close };
};

type Figures = { p50: number; p99: number; max: number; within: number };

/** The healthy receiver's delivery latencies beside `count` receivers of `kind`. */
const measure = async (kind: Kind, count: number): Promise<Figures> => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-fairness-'));
  const env = { ...apiEnv(dir), PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true' };
  const server = await startServer({ args: API_SERVICE, cwd: API_DIR, env }, join(dir, 'server.log'));
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let onAll: (() => void) | undefined;
  const bad: Receiver[] = [];
  let healthy: Receiver | undefined;
  try {
    for (let index = 0; index < count; index++) bad.push(await startReceiver(kind));
    healthy = await startReceiver('healthy', (id) => {
      const sent = sentAt.get(id);
      if (sent === undefined) return;
      sentAt.delete(id);
      latencies.push(performance.now() - sent);
      if (latencies.length === PLANTS) onAll?.();
    });
    for (const receiver of bad) await subscribe(server.url, receiver.url);
    await subscribe(server.url, healthy.url);
    const all = new Promise<void>((resolve) => {
      onAll = resolve;
    });
    await sendSteadily(
      PLANTS,
      RATE,
      () => performance.now(),
      sentAt,
      (id) => create(server.url, id),
    );
    await Promise.race([all, delay(WAIT_AFTER_MS)]);
    const sorted = [...latencies].sort((a, b) => a - b);
    const within = sorted.length;
    // Those that never arrived count as the longest wait.
    while (sorted.length < PLANTS) sorted.push(Number.POSITIVE_INFINITY);
    return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: percentile(sorted, 1), within };
  } finally {
    await server.stop();
    await Promise.all([...bad, ...(healthy ? [healthy] : [])].map((receiver) => receiver.close()));
    rmSync(dir, { recursive: true, force: true });
  }
};

const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : 'never');
const line = (label: string, { p50, p99, max, within }: Figures) =>
  `${label.padEnd(22)} p50 ${ms(p50).padStart(8)}, p99 ${ms(p99).padStart(8)}, max ${ms(max).padStart(8)}, ${within}/${PLANTS} within ${WAIT_AFTER_MS / 1000} s`;

console.log(
  `${values.smoke ? 'SMOKE run (figures mean nothing): ' : ''}healthy receiver's delivery latency, ${PLANTS} creates at ${RATE}/s, our API (c), default attempt timeout`,
);
const alone = await measure('hang', 0);
console.log(line('alone', alone));
let met = true;
for (const kind of KINDS) {
  for (const count of COUNTS) {
    const figures = await measure(kind, count);
    met &&= figures.p99 <= 1_000;
    console.log(
      `${line(`beside ${count} ${kind === 'hang' ? 'hanging' : kind === 'slow' ? 'slow' : 'refusing'}`, figures)} (${(figures.p99 / alone.p99).toFixed(1)}x alone)`,
    );
  }
}
console.log(`target: p99 at most 1 s beside every set of bad receivers: ${met ? 'met' : 'missed'}`);
