import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeStore } from '#test/fake-store';
import { NoAnswerError, postPlant } from '#test/http-request';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { CONFIG_DEFAULTS } from '../config-defaults.ts';
import type { PlantStore } from '../store/plant-store.ts';
import { answerClientErrors } from './client-errors.ts';
import { drainConnections } from './drain.ts';
import { createHttpServer, type ServerConfig, shutdownGracefully } from './http-server.ts';

const TOKEN = 'server-test-token-0123456789abcdef';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const start = async (store: PlantStore = fakeStore(), timeouts: Partial<ServerConfig> = {}) => {
  const app = createApp({ store, authenticate: staticTokens([{ hash: hashToken(TOKEN) }]) });
  const created = createHttpServer(app, { ...CONFIG_DEFAULTS.server, ...timeouts });
  answerClientErrors(created);
  server = created;
  await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
  const { port } = created.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}` };
};

/**
 * Writes `data` on a raw socket and collects what comes back until the server closes it. The limit
 * is the bound the timeout tests assert: the server closed the connection by itself, which without
 * its timeouts it would never do. It is many times those timeouts (200-600 ms), so that a busy
 * machine cannot fail it.
 */
const rawExchange = (
  port: number,
  data: string,
  limitMs = 8_000,
): Promise<{ received: string; closedAfterMs: number }> =>
  new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => {
      received += chunk;
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`The server kept the connection open for ${limitMs} ms; received: ${received}`));
    }, limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
    socket.once('error', () => {});
  });

/** A store whose creates wait until released, to hold requests in flight. */
const heldStore = () => {
  const waiting: (() => void)[] = [];
  const store = fakeStore({
    create: (plant) => new Promise((resolve) => waiting.push(() => resolve({ outcome: 'created', plant }))),
  });
  return {
    store,
    waiting,
    release: () => {
      for (const resume of waiting.splice(0)) resume();
    },
  };
};

const until = async (condition: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('server timeouts against slow clients', () => {
  it('answers 408 with the Error shape and closes a connection whose headers do not arrive in time', async () => {
    const { port } = await start(fakeStore(), { headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const { received, closedAfterMs } = await rawExchange(port, 'POST /plants HTTP/1.1\r\nHost: localhost\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(received).toContain('{"error":408,"message":"The request took too long to arrive."}');
    expect(closedAfterMs).toBeGreaterThanOrEqual(250);
  });

  it('drops a connection whose body stalls past the request timeout', async () => {
    const { port } = await start(fakeStore(), { headersTimeoutMs: 300, requestTimeoutMs: 600 });
    const head = `POST /plants HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":`;
    const { closedAfterMs } = await rawExchange(port, head);
    expect(closedAfterMs).toBeGreaterThanOrEqual(500);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const { port } = await start(fakeStore(), { keepAliveTimeoutMs: 200 });
    const { received, closedAfterMs } = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(received).toContain('Keep-Alive: timeout=');
    expect(closedAfterMs).toBeGreaterThanOrEqual(150);
  });
});

describe('shutdownGracefully', () => {
  it('drains first: keeps serving, every answer (in-flight ones too) closing its connection, then stops listening', async () => {
    const held = heldStore();
    const { url } = await start(held.store);
    // The app is not told about the drain: the server alone closes the connections.
    const drain = drainConnections(server as Server);
    const inFlight = postPlant(url, TOKEN, { id: 1n, name: 'In flight' }, { agent: false });
    await until(() => held.waiting.length === 1);
    const shutdown = shutdownGracefully(server as Server, {
      drain,
      drainMs: 400,
      graceMs: 5_000,
      close: async () => {},
    });
    const during = postPlant(url, TOKEN, { id: 2n, name: 'During the drain' }, { agent: false });
    await until(() => held.waiting.length === 2);
    held.release();
    for (const answer of await Promise.all([inFlight, during])) {
      expect(answer.status).toBe(200);
      expect(answer.headers.connection).toBe('close');
    }
    expect(await shutdown).toBe('drained');
    await expect(postPlant(url, TOKEN, { id: 3n, name: 'Late' }, { agent: false })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('stops accepting, lets in-flight requests finish, then closes the store', async () => {
    const held = heldStore();
    const { url } = await start(held.store);
    const inFlight = Array.from({ length: 5 }, (_, index) =>
      postPlant(url, TOKEN, { id: BigInt(index), name: 'In flight' }, { agent: false }),
    );
    await until(() => held.waiting.length === 5);
    let storeClosed = false;
    const shutdown = shutdownGracefully(server as Server, {
      graceMs: 5_000,
      close: async () => {
        storeClosed = true;
      },
    });
    // Refused now: the listener is closed.
    await expect(postPlant(url, TOKEN, { id: 99n, name: 'Late' }, { agent: false })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(storeClosed).toBe(false);
    held.release();
    const answers = await Promise.all(inFlight);
    expect(answers.map((answer) => answer.status)).toStrictEqual([200, 200, 200, 200, 200]);
    expect(await shutdown).toBe('drained');
    expect(storeClosed).toBe(true);
  });

  it('cuts the remaining connections once the grace period is over, and still closes the store', async () => {
    const held = heldStore();
    const { url } = await start(held.store);
    const stuck = postPlant(url, TOKEN, { id: 1n, name: 'Stuck' }, { agent: false });
    await until(() => held.waiting.length === 1);
    let storeClosed = false;
    // The held create never ends by itself: shutting down at all proves the grace cut it.
    const outcome = await shutdownGracefully(server as Server, {
      graceMs: 300,
      close: async () => {
        storeClosed = true;
      },
    });
    expect(outcome).toBe('grace period elapsed');
    expect(storeClosed).toBe(true);
    await expect(stuck).rejects.toBeInstanceOf(NoAnswerError);
    held.release();
  });
});
