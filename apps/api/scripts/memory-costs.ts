/**
 * What one connection and one request in flight cost the service in memory: the figures its bounds
 * (PLANT_MAX_CONNECTIONS, PLANT_MAX_IN_FLIGHT) and the heap flags of `pnpm start` are derived from
 * (README, Overload).
 *
 *   node --expose-gc scripts/memory-costs.ts [connections]   (default 4000; needs ulimit -n above it)
 *
 * Builds the service's server as service.ts does, on the embedded store whose creates never finish
 * (so that each one stays in flight), then from a child process opens `connections` connections
 * three ways: idle (accepted, nothing sent), kept alive after one answered GET /healthz, and each
 * with a POST /plants in flight. Heap and RSS are read after full garbage collections, before and
 * after, and divided by the number of connections.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { withCreate } from '#test/store-with-create';
import { makeDataDir } from '#test/test-server';
import { createApp } from '../src/app.ts';
import { staticTokens } from '../src/auth/authenticator.ts';
import { hashToken } from '../src/auth/token-hash.ts';
import { CONFIG_DEFAULTS } from '../src/config-defaults.ts';
import { admitRequests } from '../src/http/admission.ts';
import { drainConnections } from '../src/http/drain.ts';
import { createHttpServer } from '../src/http/http-server.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-store.ts';

const TOKEN = 'memory-costs-token-0123456789abcdef';
type Mode = 'idle' | 'kept-alive' | 'in-flight';
const MODES: Mode[] = ['idle', 'kept-alive', 'in-flight'];

/** The child: opens the connections one after another, then prints "ready" and holds them. */
const openConnections = async (port: number, count: number, mode: Mode) => {
  const sockets: Socket[] = [];
  for (let index = 0; index < count; index++) {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        if (mode === 'idle') return resolve();
        if (mode === 'kept-alive') {
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
          socket.once('data', () => resolve());
          return;
        }
        const body = JSON.stringify({ id: 1_000_000 + index, name: 'Monstera deliciosa', tag: 'indoor' });
        socket.write(
          `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        );
        resolve();
      });
      socket.on('error', () => {});
      sockets.push(socket);
    });
  }
  console.log('ready');
  process.stdin.resume();
};

const measure = async (mode: Mode, count: number) => {
  const real = await SqlitePlantStore.open(makeDataDir());
  let held = 0;
  const store = withCreate(real, () => {
    held += 1;
    return new Promise(() => {});
  });
  const metrics = createMetrics({});
  const logger = pino({ enabled: false });
  const app = createApp({
    store,
    authenticate: staticTokens([{ hash: hashToken(TOKEN) }]),
    metrics,
    logger,
    rateLimitPerToken: 0,
  });
  const server = createHttpServer(app, {
    ...CONFIG_DEFAULTS.server,
    headersTimeoutMs: 600_000,
    requestTimeoutMs: 600_000,
  });
  const admission = admitRequests(server, {
    // Every request read at once: what each costs in flight is the measure.
    maxActive: 0,
    maxInFlight: 1e6,
    maxConnections: 1e6,
    maxEventLoopDelayMs: 0,
    logger,
  });
  drainConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const run = async (connections: number) => {
    const child = spawn(process.execPath, [import.meta.filename, '--open', String(port), String(connections), mode], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    await new Promise((resolve) => child.stdout.once('data', resolve));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return child;
  };
  // The first connections warm the code paths up (compiled code is heap too, and paid once).
  (await run(50)).kill();
  await new Promise((resolve) => setTimeout(resolve, 500));
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('Run with node --expose-gc.');
  const sample = () => {
    for (let round = 0; round < 3; round++) gc();
    const { heapUsed, rss } = process.memoryUsage();
    return { heapUsed, rss };
  };
  const before = sample();
  const child = await run(count);
  const after = sample();
  child.kill();
  admission.stop();
  const kib = (bytes: number) => Math.round((bytes / count / 1024) * 10) / 10;
  console.log(
    JSON.stringify({
      mode,
      connections: count,
      heapKiBEach: kib(after.heapUsed - before.heapUsed),
      rssKiBEach: kib(after.rss - before.rss),
      heapUsedBeforeMiB: Math.round(before.heapUsed / 2 ** 20),
      ...(mode === 'in-flight' && { inFlight: held }),
    }),
  );
  process.exit(0);
};

const [first, ...rest] = process.argv.slice(2);
if (first === '--open') {
  const [port, count, mode] = rest;
  await openConnections(Number(port), Number(count), mode as Mode);
} else if (MODES.includes(first as Mode)) {
  await measure(first as Mode, Number(rest[0] ?? 4000));
} else {
  // Each mode in a fresh process: what one leaves behind must not count in the next.
  for (const mode of MODES) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--expose-gc', import.meta.filename, mode, first ?? '4000'], {
        stdio: 'inherit',
      });
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${mode} exited ${code}`))));
    });
  }
}
