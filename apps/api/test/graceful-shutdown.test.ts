import { Agent } from 'node:http';
import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { type HttpAnswer, NoAnswerError, postPlant } from '#test/http-request';
import { killAllMains, logLines, MAIN_TEST_TOKEN, type RunningMain, startMain } from '#test/main-process';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';

const WORKERS = 16;

const databases: TestDatabase[] = [];
const clients: pg.Client[] = [];
const agents: Agent[] = [];

const connect = async (url: string): Promise<pg.Client> => {
  const client = new pg.Client({ connectionString: url });
  clients.push(client);
  await client.connect();
  return client;
};

/** The service on a database of its own, dropped after the test; `env` adds to its settings. */
const startOnFreshDatabase = async (env: Record<string, string> = {}) => {
  const database = await freshDatabase('plant_drain');
  databases.push(database);
  const server = await startMain({ DATABASE_URL: database.url, PLANT_API_TOKENS: MAIN_TEST_TOKEN, ...env });
  return { database, server };
};

afterEach(async () => {
  await killAllMains();
  for (const agent of agents.splice(0)) agent.destroy();
  for (const client of clients.splice(0)) await client.end().catch(() => {});
  for (const created of databases.splice(0)) await created.drop();
});
afterAll(killAllMains);

const until = async (condition: () => boolean, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

type Outcome = { id: bigint; answer?: HttpAnswer; error?: NoAnswerError };

/**
 * Clients that each keep one connection and create plants back to back, as a busy upstream would,
 * until the server asks them to go (Connection: close) or refuses them.
 */
const load = (server: RunningMain, workers = WORKERS) => {
  const outcomes: Outcome[] = [];
  const pending = new Set<bigint>();
  let next = 2n ** 60n;
  const worker = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    for (;;) {
      const id = next++;
      pending.add(id);
      try {
        const answer = await postPlant(server.url, MAIN_TEST_TOKEN, { id, name: `Plant ${id}` }, { agent });
        outcomes.push({ id, answer });
        if (answer.headers.connection === 'close') return;
      } catch (error) {
        outcomes.push({ id, error: error as NoAnswerError });
        return;
      } finally {
        pending.delete(id);
      }
    }
  };
  const done = Promise.all(Array.from({ length: workers }, worker));
  return { outcomes, pending, done, acknowledged: () => outcomes.filter((o) => o.answer?.status === 200).length };
};

const storedIds = async (url: string): Promise<Set<bigint>> => {
  const client = await connect(url);
  const { rows } = await client.query<{ id: string }>('SELECT id::text FROM plants');
  return new Set(rows.map((row) => BigInt(row.id)));
};

describeWithPostgres('graceful shutdown under load (PostgreSQL)', () => {
  it('on SIGTERM finishes every in-flight request with 200, refuses new connections, and exits 0', async () => {
    const { database, server } = await startOnFreshDatabase();
    const traffic = load(server);
    await until(() => traffic.acknowledged() >= 100, '100 acknowledged creates');

    // Hold every create in the database, so that each worker has a request in flight for certain.
    const locker = await connect(database.url);
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE plants IN SHARE ROW EXCLUSIVE MODE');
    await until(() => traffic.pending.size === WORKERS, 'every worker to have a request in flight');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const inFlight = new Set(traffic.pending);

    server.child.kill('SIGTERM');
    await server.waitForStdout(/"msg":"shutting down"/);
    // Refused, or reset when it reached the backlog just before the listener closed: never served.
    await expect(
      postPlant(server.url, MAIN_TEST_TOKEN, { id: 1n, name: 'Too late' }, { agent: false }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^(ECONNREFUSED|ECONNRESET)$/) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(server.child.exitCode).toBeNull(); // still draining: the requests are still in flight

    await locker.query('COMMIT');
    await traffic.done;
    expect(await server.exited()).toStrictEqual({ code: 0, signal: null });
    expect(logLines(server.stdout()).map((line) => line.msg)).toEqual(
      expect.arrayContaining(['shutting down', 'stopped']),
    );

    expect(traffic.outcomes.filter((outcome) => outcome.error)).toStrictEqual([]);
    for (const outcome of traffic.outcomes) expect(outcome.answer?.status, outcome.answer?.text).toBe(200);
    const answered = new Set(traffic.outcomes.map((outcome) => outcome.id));
    for (const id of inFlight) expect(answered.has(id)).toBe(true);
    const stored = await storedIds(database.url);
    for (const outcome of traffic.outcomes) expect(stored.has(outcome.id)).toBe(true);
    expect(stored.has(1n)).toBe(false);
  }, 40_000);

  it('on SIGINT amid free-flowing load answers every request it took, and never acts on one it failed', async () => {
    const { database, server } = await startOnFreshDatabase();
    const traffic = load(server);
    await until(() => traffic.acknowledged() >= 200, '200 acknowledged creates');
    server.child.kill('SIGINT');
    await traffic.done;
    expect(await server.exited()).toStrictEqual({ code: 0, signal: null });

    const stored = await storedIds(database.url);
    for (const outcome of traffic.outcomes) {
      if (outcome.answer) {
        expect(outcome.answer.status, outcome.answer.text).toBe(200);
        expect(stored.has(outcome.id)).toBe(true);
      } else {
        // Refused, or sent on a keep-alive connection as the server closed it: never processed.
        expect(outcome.error?.code).toMatch(/^(ECONNREFUSED|ECONNRESET|EPIPE)$/);
        expect(stored.has(outcome.id), `plant ${outcome.id} was stored without an answer`).toBe(false);
      }
    }
  }, 40_000);

  it('exits 1 once the grace period is over, with requests still stuck', async () => {
    const { database, server } = await startOnFreshDatabase({ PLANT_SHUTDOWN_GRACE_MS: '500' });
    const locker = await connect(database.url);
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE plants IN SHARE ROW EXCLUSIVE MODE');
    const stuck = postPlant(server.url, MAIN_TEST_TOKEN, { id: 1n, name: 'Stuck' }, { agent: false }).then(
      (answer) => answer,
      (error: unknown) => error,
    );
    // The create has reached the database once it waits for the lock.
    const waitsForLock = async () =>
      (
        await locker.query<{ waiting: number }>(
          "SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND relation = 'plants'::regclass",
        )
      ).rows[0]?.waiting === 1;
    for (const deadline = Date.now() + 10_000; !(await waitsForLock()); ) {
      if (Date.now() > deadline) throw new Error('The create never reached the database.');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const started = Date.now();
    server.child.kill('SIGTERM');
    expect(await server.exited()).toStrictEqual({ code: 1, signal: null });
    // The lock holds the create for ever: exiting at all is the grace's doing. The bound tells a
    // grace of 500 ms from one far longer, generously so that a busy machine cannot fail it.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.stderr()).toContain('Shutdown grace period elapsed; exiting with requests still open.');
    expect(await stuck).toBeInstanceOf(NoAnswerError);
    await locker.query('ROLLBACK');
  }, 30_000);
});
