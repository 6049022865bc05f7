import { Agent, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { httpRequest, postPlant } from '#test/http-request';
import { withCreate } from '#test/store-with-create';
import { makeDataDir } from '#test/test-server';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { CONFIG_DEFAULTS } from '../config-defaults.ts';
import { createMetrics } from '../ops/metrics.ts';
import { SqlitePlantStore } from '../store/sqlite/sqlite-store.ts';
import { type Admission, type AdmissionLimits, admitRequests } from './admission.ts';
import { corsAnswerHeaders } from './cors.ts';
import { drainConnections } from './drain.ts';
import { createHttpServer } from './http-server.ts';

const TOKEN = 'admission-test-token-0123456789abcdef';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The real SQLite store, whose creates wait at a gate until the test opens it for good. */
const slowedStore = (store: SqlitePlantStore) => {
  const waiting: (() => void)[] = [];
  let opened = false;
  const slowed = withCreate(store, async (plant) => {
    if (!opened) await new Promise<void>((resolve) => waiting.push(resolve));
    return store.create(plant);
  });
  return {
    slowed,
    waiting,
    open: () => {
      opened = true;
      for (const resume of waiting.splice(0)) resume();
    },
  };
};

/** The service's server, as service.ts composes it, with the given bounds. */
const start = async (limits: Partial<AdmissionLimits>, corsOrigins?: readonly string[]) => {
  const store = await SqlitePlantStore.open(makeDataDir());
  const gate = slowedStore(store);
  const metrics = createMetrics({ processMetrics: false });
  const lines: { msg: string; shed?: Record<string, number> }[] = [];
  const logger = pino(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  const app = createApp({
    store: gate.slowed,
    authenticate: staticTokens([{ hash: hashToken(TOKEN) }]),
    metrics,
    serveMetrics: true,
    logger,
    ...(corsOrigins && { corsOrigins }),
  });
  const server: Server = createHttpServer(app, CONFIG_DEFAULTS.server);
  const admission: Admission = admitRequests(server, {
    maxActive: 0,
    maxInFlight: 1_000,
    maxConnections: 1_000,
    maxEventLoopDelayMs: 0,
    ...limits,
    logger,
    onShed: metrics.countShed,
    ...(corsOrigins && { corsHeaders: corsAnswerHeaders(corsOrigins) }),
  });
  drainConnections(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    admission.stop();
    gate.open();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  });
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, store, gate, metrics, lines, admission };
};

const until = async (condition: () => boolean, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

const shedCount = async (metrics: ReturnType<typeof createMetrics>, reason: string): Promise<number> => {
  const text = await metrics.registry.metrics();
  const line = text.split('\n').find((row) => row.startsWith(`plant_http_requests_shed_total{reason="${reason}"}`));
  return Number(line?.split(' ')[1]);
};

const expectShed = (answer: Awaited<ReturnType<typeof httpRequest>>, bound: RegExp) => {
  expect(answer.status).toBe(503);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers['retry-after']).toBe('1');
  expect(answer.headers.connection).toBe('close');
  expect(answer.json()).toStrictEqual({ error: 503, message: expect.stringMatching(bound) });
};

/** Opens a raw connection and resolves once the server accepted it. */
const openSocket = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket)).once('error', reject);
    cleanups.push(() => void socket.destroy());
  });

describe('admission control', () => {
  it('sheds requests past the in-flight bound with 503, Retry-After and Connection: close; none of them is stored', async () => {
    const { url, store, gate, metrics, lines, admission } = await start({ maxInFlight: 2 });
    const held = [1n, 2n].map((id) => postPlant(url, TOKEN, { id, name: 'Held' }, { agent: false }));
    await until(() => gate.waiting.length === 2);

    const refused = await Promise.all(
      [3n, 4n, 5n].map((id) => postPlant(url, TOKEN, { id, name: 'Refused' }, { agent: false })),
    );
    for (const answer of refused) expectShed(answer, /PLANT_MAX_IN_FLIGHT/);
    // Before authentication: a request without a token is shed too, not answered 401.
    expectShed(await httpRequest(`${url}/plants/1`, { agent: false }), /PLANT_MAX_IN_FLIGHT/);
    // The liveness probe is never shed.
    const health = await httpRequest(`${url}/healthz`, { agent: false });
    expect(health.status).toBe(200);
    expect(health.json()).toStrictEqual({ status: 'ok' });
    expect(gate.waiting.length).toBe(2);

    gate.open();
    for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
    await until(() => admission.inFlight === 0);
    expect(await store.get(1n)).toStrictEqual({ id: 1n, name: 'Held' });
    expect(await store.get(2n)).toStrictEqual({ id: 2n, name: 'Held' });
    for (const id of [3n, 4n, 5n]) expect(await store.get(id)).toBeUndefined();

    // Served again once under the bound, and the sheds are counted and logged (once a second at most).
    expect((await postPlant(url, TOKEN, { id: 6n, name: 'Later' }, { agent: false })).status).toBe(200);
    const exposed = await httpRequest(`${url}/metrics`, { agent: false });
    expect(exposed.text).toContain('plant_http_requests_shed_total{reason="in_flight"} 4');
    expect(await shedCount(metrics, 'connections')).toBe(0);
    const logged = lines.filter((line) => line.msg === 'shedding requests: the service is overloaded');
    expect(logged.length).toBeLessThan(4);
    expect(logged[0]?.shed).toStrictEqual({ in_flight: 1, connections: 0, event_loop_delay: 0 });
  });

  it('lets a page on an allowed origin read a shed answer: its 503 carries the CORS headers', async () => {
    const page = 'https://app.example.com';
    const { url, gate } = await start({ maxInFlight: 1 }, [page]);
    const held = postPlant(url, TOKEN, { id: 1n, name: 'Held' }, { agent: false });
    await until(() => gate.waiting.length === 1);
    const allowed = await httpRequest(`${url}/plants`, { headers: { origin: page }, agent: false });
    expectShed(allowed, /PLANT_MAX_IN_FLIGHT/);
    expect(allowed.headers['access-control-allow-origin']).toBe(page);
    expect(allowed.headers.vary).toBe('Origin');
    expect(allowed.headers['access-control-expose-headers']).toMatch(/(^|,)Retry-After(,|$)/);
    const other = await httpRequest(`${url}/plants`, { headers: { origin: 'https://other.example' }, agent: false });
    expectShed(other, /PLANT_MAX_IN_FLIGHT/);
    expect(Object.keys(other.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
    gate.open();
    expect((await held).status).toBe(200);
  });

  it('answers before reading the body: a request whose body never comes is shed at once', async () => {
    const { port, admission } = await start({ maxInFlight: 1 });
    const body = `POST /plants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"id":`;
    (await openSocket(port)).write(body);
    await until(() => admission.inFlight === 1);
    // The first request holds the only slot (its body never arrives); a second one is shed.
    const second = await openSocket(port);
    const received = new Promise<string>((resolve) => {
      let text = '';
      second.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      second.once('close', () => resolve(text));
    });
    second.write(body);
    const answer = await received;
    expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(answer).toContain('Retry-After: 1\r\n');
    expect(answer).toContain('Connection: close\r\n');
    expect(answer).toContain('"error":503');
  });

  it('sheds the requests of connections past the connection bound and closes them, but answers /healthz', async () => {
    const { url, port, metrics, admission } = await start({ maxConnections: 2 });
    await openSocket(port);
    await openSocket(port);
    await until(() => admission.connections === 2);

    expectShed(await postPlant(url, TOKEN, { id: 7n, name: 'Over' }, { agent: false }), /PLANT_MAX_CONNECTIONS/);
    await until(() => admission.connections === 2);
    const health = await httpRequest(`${url}/healthz`, { agent: false });
    expect(health.status).toBe(200);
    expect(health.headers.connection).toBe('close');
    expect(await shedCount(metrics, 'connections')).toBe(1);
  });

  it('closes connections past a quarter more than the bound unanswered, and counts them', async () => {
    const { url, port, metrics, admission } = await start({ maxConnections: 4 });
    for (let index = 0; index < 5; index++) await openSocket(port);
    await until(() => admission.connections === 5);
    await expect(postPlant(url, TOKEN, { id: 10n, name: 'Dropped' }, { agent: false })).rejects.toMatchObject({
      code: expect.stringMatching(/^(ECONNRESET|EPIPE|ERROR)$/),
    });
    expect(await shedCount(metrics, 'connections')).toBe(1);
  });

  it('sheds while the event loop is behind, and serves again once it caught up', async () => {
    // Far above what a busy machine's idle loop shows, far below the blocks below.
    const { url, metrics, gate } = await start({ maxEventLoopDelayMs: 100 });
    gate.open();
    const read = () => httpRequest(`${url}/plants/1`, { headers: { authorization: `Bearer ${TOKEN}` }, agent: false });
    // The monitor measures from its first tick on.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A request is sent, then the loop held for 300 ms: the half-second sample that covers it holds
    // such delays and averages far above the bound. Until one request is shed (a sample may fall
    // between two blocks on a busy machine), at most 20 times.
    let shed = await read();
    for (let tries = 0; shed.status !== 503 && tries < 20; tries++) {
      const reading = read();
      const busyUntil = Date.now() + 300;
      while (Date.now() < busyUntil) {}
      shed = await reading;
    }
    expectShed(shed, /PLANT_MAX_EVENT_LOOP_DELAY_MS/);
    expect((await httpRequest(`${url}/healthz`, { agent: false })).status).toBe(200);
    expect(await shedCount(metrics, 'event_loop_delay')).toBeGreaterThanOrEqual(1);
    // A later sample finds the loop caught up: served again (404: no such plant).
    let answer = await read();
    for (let tries = 0; answer.status === 503 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      answer = await read();
    }
    expect(answer.status).toBe(404);
  });
});

describe('holding connections back past maxActive', () => {
  it('leaves a connection unread while the active requests are at the bound, then serves it when one finishes', async () => {
    const { url, store, gate, admission } = await start({ maxActive: 2 });
    const first = [1n, 2n].map((id) => postPlant(url, TOKEN, { id, name: 'Active' }, { agent: false }));
    await until(() => gate.waiting.length === 2);

    const third = postPlant(url, TOKEN, { id: 3n, name: 'Waited' }, { agent: false });
    await until(() => admission.waiting === 1);
    // Not read: neither in flight nor shed, and nothing of it reached the store.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(admission.inFlight).toBe(2);
    expect(gate.waiting.length).toBe(2);

    gate.open();
    for (const answer of [...(await Promise.all(first)), await third]) expect(answer.status).toBe(200);
    expect(admission.waiting).toBe(0);
    expect(await store.get(3n)).toStrictEqual({ id: 3n, name: 'Waited' });
  });

  it('holds a kept-alive connection after its answer, its next request unread until a request finishes', async () => {
    const { url, gate, admission } = await start({ maxActive: 1 });
    const active = postPlant(url, TOKEN, { id: 1n, name: 'Active' }, { agent: false });
    await until(() => gate.waiting.length === 1);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    // Held when it connects, read after half a second, answered, and held again after its answer.
    expect((await httpRequest(`${url}/healthz`, { agent })).status).toBe(200);
    expect(admission.waiting).toBe(1);

    const waited = postPlant(url, TOKEN, { id: 2n, name: 'Waited' }, { agent });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(admission.inFlight).toBe(1);
    gate.open();
    expect((await active).status).toBe(200);
    expect((await waited).status).toBe(200);
  });

  it('reads waiting connections oldest first', async () => {
    const { url, gate, admission } = await start({ maxActive: 1 });
    const answered: string[] = [];
    const active = postPlant(url, TOKEN, { id: 1n, name: 'Active' }, { agent: false });
    await until(() => gate.waiting.length === 1);
    const waiter = (id: bigint, name: string) =>
      postPlant(url, TOKEN, { id, name }, { agent: false }).then((answer) => {
        answered.push(name);
        return answer;
      });
    const second = waiter(2n, 'second');
    await until(() => admission.waiting === 1);
    const third = waiter(3n, 'third');
    await until(() => admission.waiting === 2);

    // One request finishes: room for one, which goes to the oldest waiting; the other still waits.
    gate.waiting.shift()?.();
    expect((await active).status).toBe(200);
    await until(() => gate.waiting.length === 1);
    expect(admission.waiting).toBe(1);
    gate.open();
    for (const answer of await Promise.all([second, third])) expect(answer.status).toBe(200);
    expect(answered).toStrictEqual(['second', 'third']);
    expect(admission.waiting).toBe(0);
  });

  it('reads a connection held for half a second, so that past the in-flight bound its client gets a 503', async () => {
    const { url, gate, admission } = await start({ maxActive: 1, maxInFlight: 1 });
    const active = postPlant(url, TOKEN, { id: 1n, name: 'Active' }, { agent: false });
    await until(() => gate.waiting.length === 1);
    const started = performance.now();
    const late = await postPlant(url, TOKEN, { id: 2n, name: 'Late' }, { agent: false });
    expectShed(late, /PLANT_MAX_IN_FLIGHT/);
    // Held first: it was not read before the half second had passed.
    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
    expect(admission.waiting).toBe(0);
    gate.open();
    expect((await active).status).toBe(200);
  });

  it('reads every waiting connection when asked to (the shutdown drain), and holds none from then on', async () => {
    const { url, gate, admission } = await start({ maxActive: 1 });
    const active = postPlant(url, TOKEN, { id: 1n, name: 'Active' }, { agent: false });
    await until(() => gate.waiting.length === 1);
    const waited = postPlant(url, TOKEN, { id: 2n, name: 'Waited' }, { agent: false });
    await until(() => admission.waiting === 1);

    admission.readAll();
    await until(() => gate.waiting.length === 2);
    const more = postPlant(url, TOKEN, { id: 3n, name: 'More' }, { agent: false });
    await until(() => gate.waiting.length === 3);
    expect(admission.waiting).toBe(0);
    gate.open();
    for (const answer of await Promise.all([active, waited, more])) expect(answer.status).toBe(200);
  });
});
