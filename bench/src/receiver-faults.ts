/**
 * How deliveries fare with receivers that fail in ordinary ways (issue 47). Each run starts our API
 * (c) on a fresh data directory with the default retry schedule (5 s, 5 min, …), subscribes one
 * faulty receiver and a healthy one (204 at once), creates plants at `--rate` a second for
 * `--seconds`, one request each at its time, and waits for the last deliveries (at most
 * `--wait` seconds after the last create). The faulty receivers:
 *
 * - first: answers 500 to the first attempt of each event, 2xx to the next (it reads the plant back
 *   before it can see it);
 * - random: answers 500 to 30% of attempts at random;
 * - 503: a rate-limited receiver taking twice the create rate a second (a bucket of as many) and
 *   answering 503 with `Retry-After: 1` beyond;
 * - down: resets every connection for `--down` seconds from the first create, then answers.
 *
 * For each it prints the share of events delivered within 10 s of their create (when they were
 * first due), their p50 / p99 / max, the backlog when a down receiver came back and how long it
 * took to clear, and beside it the healthy receiver's p99, as a ratio to the healthy receiver's
 * p99 alone (the baseline of the same run). Printed, never gated; run it on a quiet machine.
 *
 *   pnpm --filter @org/plant-bench receiver-faults [--rate 20] [--seconds 90] [--down 60] [--wait 60]
 *     [--kinds first,random,503,down] [--smoke]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { percentile, sendSteadily } from '../../apps/api/test/support/steady-sends.ts';
import { create, subscribe } from './receiver-load.ts';
import { parseScriptArgs } from './script-args.ts';
import { startServer } from './server-process.ts';
import { API_DIR, API_SERVICE, apiEnv } from './targets.ts';

type Kind = 'first' | 'random' | '503' | 'down';
const KIND_NAMES: Record<Kind, string> = {
  first: 'fails each first attempt',
  random: 'fails 30% at random',
  '503': '503 Retry-After beyond 2x rate',
  down: 'down, then back',
};

const values = parseScriptArgs(
  { rate: '20', seconds: '90', down: '60', wait: '60', kinds: 'first,random,503,down' },
  // A few seconds of each: proves the scenario runs, measures nothing.
  ['smoke'],
);
const RATE = Number(values.rate);
const SECONDS = values.smoke ? 3 : Number(values.seconds);
const DOWN_MS = (values.smoke ? 2 : Number(values.down)) * 1000;
const WAIT_MS = (values.smoke ? 15 : Number(values.wait)) * 1000;
const PLANTS = Math.round(RATE * SECONDS);
const KINDS = values.kinds.split(',') as Kind[];
for (const kind of KINDS) if (!(kind in KIND_NAMES)) throw new Error(`Unknown kind ${kind}.`);
/** The share of events delivered within this long of their create is the headline figure. */
const PROMPT_MS = 10_000;

type Receiver = {
  url: string;
  /** When each plant's event was first answered 2xx (performance.now()). */
  deliveredAt: Map<number, number>;
  /** Down receivers: when it answers again. */
  upAt?: number;
  close(): Promise<void>;
};

/** A receiver on loopback that answers as `kind` says (or 204 at once when healthy). */
const startReceiver = async (kind: Kind | 'healthy'): Promise<Receiver> => {
  const deliveredAt = new Map<number, number>();
  const attempts = new Map<string, number>();
  const capacity = 2 * RATE;
  let tokens = capacity;
  let filledAt = performance.now();
  const startedAt = performance.now();
  const receiver: Receiver = { url: '', deliveredAt, close: async () => {} };
  /** The status of this attempt: 2xx, or the receiver's fault. */
  const answer = (webhookId: string): [number, Record<string, string>?] => {
    const before = attempts.get(webhookId) ?? 0;
    attempts.set(webhookId, before + 1);
    if (kind === 'first') return [before === 0 ? 500 : 204];
    if (kind === 'random') return [Math.random() < 0.3 ? 500 : 204];
    if (kind === '503') {
      const now = performance.now();
      tokens = Math.min(capacity, tokens + ((now - filledAt) * capacity) / 1000);
      filledAt = now;
      if (tokens < 1) return [503, { 'retry-after': '1' }];
      tokens -= 1;
    }
    return [204];
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const [status, headers] = answer(String(req.headers['webhook-id']));
      if (status < 300) {
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number }).id;
        if (!deliveredAt.has(id)) deliveredAt.set(id, performance.now());
      }
      res.writeHead(status, headers).end();
    });
  });
  if (kind === 'down') {
    receiver.upAt = startedAt + DOWN_MS;
    // Down: connections reset, as a receiver whose process is gone behind a live host.
    server.on('connection', (socket: Socket) => {
      if (performance.now() < (receiver.upAt as number)) socket.resetAndDestroy();
    });
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
};

type Latencies = { sorted: number[]; within: number; delivered: number };

/** Each plant's delivery latency from its send, ascending; those never delivered last, as never. */
const latencies = (receiver: Receiver, sentAt: Map<number, number>): Latencies => {
  const sorted = [...sentAt].map(([id, sent]) => (receiver.deliveredAt.get(id) ?? Number.POSITIVE_INFINITY) - sent);
  sorted.sort((a, b) => a - b);
  return {
    sorted,
    within: sorted.filter((ms) => ms <= PROMPT_MS).length,
    delivered: sorted.filter(Number.isFinite).length,
  };
};

type Figures = { faulty?: Latencies; healthy: Latencies; backlog?: number; clearedMs?: number };

/** A run with the healthy receiver beside one of `kind` (none: the baseline). */
const measure = async (kind: Kind | undefined): Promise<Figures> => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-faults-'));
  const env = { ...apiEnv(dir), PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true' };
  const server = await startServer({ args: API_SERVICE, cwd: API_DIR, env }, join(dir, 'server.log'));
  const receivers: Receiver[] = [];
  try {
    const healthy = await startReceiver('healthy');
    receivers.push(healthy);
    await subscribe(server.url, healthy.url);
    // Started last: a down receiver's outage begins with the creates.
    const faulty = kind === undefined ? undefined : await startReceiver(kind);
    if (faulty) {
      receivers.push(faulty);
      await subscribe(server.url, faulty.url);
    }
    const sentAt = new Map<number, number>();
    let backlog: number | undefined;
    const sending = sendSteadily(
      PLANTS,
      RATE,
      () => performance.now(),
      sentAt,
      (id) => create(server.url, id),
    );
    if (faulty?.upAt !== undefined) {
      await delay(Math.max(0, faulty.upAt - performance.now()));
      backlog = sentAt.size - faulty.deliveredAt.size;
    }
    await sending;
    const allDelivered = () => receivers.every((receiver) => receiver.deliveredAt.size >= PLANTS);
    const waitUntil = performance.now() + WAIT_MS;
    while (!allDelivered() && performance.now() < waitUntil) await delay(50);
    const figures: Figures = { healthy: latencies(healthy, sentAt) };
    if (faulty) figures.faulty = latencies(faulty, sentAt);
    if (faulty?.upAt !== undefined && backlog !== undefined) {
      figures.backlog = backlog;
      // Cleared once every event created before it came back was delivered.
      const waited = [...sentAt].filter(([, sent]) => sent < (faulty.upAt as number)).map(([id]) => id);
      const last = Math.max(...waited.map((id) => faulty.deliveredAt.get(id) ?? Number.POSITIVE_INFINITY));
      figures.clearedMs = last - faulty.upAt;
    }
    return figures;
  } finally {
    await server.stop();
    await Promise.all(receivers.map((receiver) => receiver.close()));
    rmSync(dir, { recursive: true, force: true });
  }
};

const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)} ms` : 'never');
const share = ({ within }: Latencies) => `${((100 * within) / PLANTS).toFixed(1)}%`;
const spread = ({ sorted }: Latencies) =>
  `p50 ${ms(percentile(sorted, 0.5))}, p99 ${ms(percentile(sorted, 0.99))}, max ${ms(percentile(sorted, 1))}`;

console.log(
  `${values.smoke ? 'SMOKE run (figures mean nothing): ' : ''}${PLANTS} creates at ${RATE}/s, our API (c), default retry schedule; delivered within ${PROMPT_MS / 1000} s of the create`,
);
const alone = await measure(undefined);
const aloneP99 = percentile(alone.healthy.sorted, 0.99);
console.log(`${'healthy receiver alone'.padEnd(32)} ${share(alone.healthy)} within, ${spread(alone.healthy)}`);
for (const kind of KINDS) {
  const { faulty, healthy, backlog, clearedMs } = await measure(kind);
  if (!faulty) continue;
  const recovery =
    backlog === undefined
      ? ''
      : `; backlog ${backlog} when back after ${DOWN_MS / 1000} s, cleared in ${ms(clearedMs ?? Number.NaN)}`;
  const healthyP99 = percentile(healthy.sorted, 0.99);
  console.log(
    `${KIND_NAMES[kind].padEnd(32)} ${share(faulty)} within, ${faulty.delivered}/${PLANTS} delivered, ${spread(faulty)}${recovery}`,
  );
  console.log(
    `${'  healthy receiver beside it'.padEnd(32)} p99 ${ms(healthyP99)} (${(healthyP99 / aloneP99).toFixed(1)}x alone)`,
  );
}
