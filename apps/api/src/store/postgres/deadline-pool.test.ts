import { EventEmitter } from 'node:events';
import pg from 'pg';
import { afterEach, expect, it, vi } from 'vitest';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';
import { until } from '#test/until';
import { StoreUnavailableError } from '../plant-store.ts';
import { deadlinePool } from './deadline-pool.ts';
import { PostgresPlantStore } from './postgres-store.ts';

const DEADLINE_MS = 500;
/** Beyond the deadline, for a busy machine: far below the timeouts that bounded a request before (5 s each). */
const MARGIN_MS = 700;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A store on a fresh database whose connect and statement timeouts are far beyond the deadline:
 * only the deadline can end the waits.
 */
const storeWithDeadline = async (poolSize: number) => {
  const database = await freshDatabase('plant_deadline');
  cleanups.push(() => database.drop());
  const store = await PostgresPlantStore.open({
    url: database.url,
    poolSize,
    connectTimeoutMs: 30_000,
    statementTimeoutMs: 30_000,
    deadlineMs: DEADLINE_MS,
  });
  return { database, store };
};

describeWithPostgres('the deadline of a store operation on PostgreSQL', () => {
  it('fails every operation of a stalled database within the deadline, cancels its statements on the server, and serves again', async () => {
    const { database, store } = await storeWithDeadline(2);
    cleanups.push(() => store.close());
    expect((await store.create({ id: 1n, name: 'Before' })).outcome).toBe('created');

    // Stalled: every statement on plants waits for this lock, two of them holding the pool's two
    // connections, the others waiting in its queue.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query('BEGIN; LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
    const started = Date.now();
    const outcomes = await Promise.all(
      [
        ...Array.from({ length: 6 }, (_, index) => store.create({ id: BigInt(10 + index), name: 'During' })),
        ...Array.from({ length: 4 }, () => store.get(1n)),
      ].map((operation) =>
        operation.then(
          () => ({ ms: Date.now() - started, error: undefined }),
          (error: unknown) => ({ ms: Date.now() - started, error }),
        ),
      ),
    );
    for (const { ms, error } of outcomes) {
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
      expect(ms).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    }
    // Cancelled on the server: none of them waits for the lock any more, long before their own timeout.
    const waiting = async () =>
      (
        await admin.query<{ count: number }>(
          `SELECT count(*)::int AS count FROM pg_stat_activity
           WHERE datname = current_database() AND application_name = 'plant-api' AND wait_event_type = 'Lock'`,
        )
      ).rows[0]?.count;
    await until(waiting, (count) => count === 0, 5_000);

    await admin.query('ROLLBACK');
    expect((await store.create({ id: 2n, name: 'After' })).outcome).toBe('created');
    expect(await store.get(1n)).toStrictEqual({ id: 1n, name: 'Before' });
  }, 30_000);
});

describeWithPostgres('a change of event types on PostgreSQL within the deadline', () => {
  it('gives up its lock wait at the deadline, so that the creates it held back go on', async () => {
    const { database, store } = await storeWithDeadline(3);
    cleanups.push(() => store.close());
    await store.webhooks.createEndpoint(
      { id: 'ep_a', url: 'https://hooks.example.com/a', secret: 'whsec_a', owner: 'operator' },
      { perOwner: 10, total: 10 },
    );
    // A transaction that announced and has not committed: the change waits for it.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    cleanups.push(() => admin.end());
    await admin.query(`BEGIN; INSERT INTO webhook_events (plant_id, data) VALUES (1, '{"id":1,"name":"Pending"}')`);
    const started = Date.now();
    const change = store.webhooks.updateEndpoint('ep_a', { eventTypes: ['plantDeleted'] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await until(
      async () =>
        (
          await admin.query<{ count: number }>(
            `SELECT count(*)::int AS count FROM pg_stat_activity
             WHERE datname = current_database() AND application_name = 'plant-api' AND wait_event_type = 'Lock'`,
          )
        ).rows[0]?.count,
      (count) => count === 1,
    );
    // Held back behind the change's lock request while it waits; its own deadline ends later.
    await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS / 5));
    let createdAt = Number.POSITIVE_INFINITY;
    const create = store.create({ id: 2n, name: 'Held' }).finally(() => {
      createdAt = Date.now();
    });
    expect(await change).toBeInstanceOf(StoreUnavailableError);
    const changeFailedAt = Date.now();
    expect(changeFailedAt - started).toBeLessThan(DEADLINE_MS + MARGIN_MS);
    expect((await create).outcome).toBe('created');
    expect(createdAt).toBeGreaterThanOrEqual(changeFailedAt);
    await admin.query('ROLLBACK');
    expect((await store.webhooks.getEndpoint('ep_a'))?.eventTypes).toStrictEqual(['newPlant']);
    const changed = await store.webhooks.updateEndpoint('ep_a', { eventTypes: ['plantDeleted'] });
    expect(changed.outcome === 'updated' && changed.endpoint.eventTypes).toStrictEqual(['plantDeleted']);
  }, 30_000);
});

it('hears a lent connection that breaks, which would otherwise end the process, and closes it', async () => {
  // A connection the server dropped while it was lent: pg emits 'error' on it, and an EventEmitter
  // with no listener throws that at whoever emitted it, here the socket's close handler.
  const client = Object.assign(new EventEmitter(), {
    query: () => answered,
    release: vi.fn(),
  });
  let answer: (value: unknown) => void = () => {};
  const answered = new Promise((resolve) => {
    answer = resolve;
  });
  const pool = { connect: async () => client } as unknown as pg.Pool;
  const query = deadlinePool(pool, 5_000).query('SELECT 1');
  await until(
    async () => client.listenerCount('error'),
    (count) => count > 0,
  );
  const broken = new Error('Connection terminated unexpectedly');
  expect(() => client.emit('error', broken)).not.toThrow();
  answer({ rows: [] });
  await query;
  expect(client.release).toHaveBeenCalledWith(broken);
  expect(client.listenerCount('error')).toBe(0);
});
