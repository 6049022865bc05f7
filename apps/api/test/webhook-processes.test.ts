import { Agent } from 'node:http';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { postPlant } from '#test/http-request';
import { MAIN_TEST_TOKEN, startMain } from '#test/main-process';
import { describeWithPostgres } from '#test/postgres-test-database';
import {
  listDeliveries as deliveries,
  processFixtures,
  registerEndpoint as register,
  WEBHOOK_PROCESS_ENV,
} from '#test/process-fixtures';
import { until } from '#test/until';
import type { WebhookReceiver } from '#test/webhook-receiver';

/** The real service processes (node src/main.ts), killed for real. */

const { dataDir: makeDataDir, receiver, database: freshTestDatabase } = processFixtures('plant_webhooks');

const WEBHOOK_ENV = { ...WEBHOOK_PROCESS_ENV, PLANT_API_TOKENS: MAIN_TEST_TOKEN };

/**
 * The receiver's last request is the delivery `id` with `body`, signed with `secret`; whatever
 * reached it before a kill carried the same webhook-id, so it deduplicates on it.
 */
const expectOnlyDelivery = (hook: WebhookReceiver, secret: string, id: string | undefined, body: string) => {
  const last = hook.received.at(-1);
  expect(last?.body).toBe(body);
  expect(last?.headers['webhook-id']).toBe(id);
  expect(() => new Webhook(secret).verify(last?.body ?? '', last?.headers as Record<string, string>)).not.toThrow();
  expect(new Set(hook.received.map((request) => request.headers['webhook-id']))).toStrictEqual(new Set([id]));
};

/**
 * A plant acknowledged just before kill -9 is delivered after the restart, once, with one
 * webhook-id: the outbox row was committed with the plant. `storage` points the service at its store.
 */
const deliversAfterKill9 = async (storage: Record<string, string>) => {
  const env = { ...WEBHOOK_ENV, ...storage, PLANT_WEBHOOK_TIMEOUT_MS: '60000' };
  const hook = await receiver();
  // Nothing is acknowledged before the kill: an attempt already under way never gets its answer.
  hook.answer('hang');
  const first = await startMain(env);
  const endpoint = await register(first.url, hook.url);
  const id = 9007199254740993n;
  expect((await postPlant(first.url, MAIN_TEST_TOKEN, { id, name: 'Survivor', tag: 'durable' })).status).toBe(200);
  first.child.kill('SIGKILL');
  expect(await first.exited()).toStrictEqual({ code: null, signal: 'SIGKILL' });

  hook.answer({ status: 200 });
  const second = await startMain(env);
  const [delivered] = await until(
    () => deliveries(second.url, endpoint.id),
    ([delivery]) => delivery?.status === 'delivered',
    15_000,
  );
  expect(delivered).toMatchObject({ plantId: id, status: 'delivered' });
  expectOnlyDelivery(hook, endpoint.secret, delivered?.id, '{"id":9007199254740993,"name":"Survivor","tag":"durable"}');
};

/**
 * A deletion acknowledged just before kill -9 is delivered after the restart, once and signed, to
 * an endpoint subscribed to deletions: its event was committed with the deletion.
 */
const deliversDeletionAfterKill9 = async (storage: Record<string, string>) => {
  const env = { ...WEBHOOK_ENV, ...storage, PLANT_WEBHOOK_TIMEOUT_MS: '60000' };
  const hook = await receiver();
  hook.answer('hang');
  const first = await startMain(env);
  const endpoint = await register(first.url, hook.url, { eventTypes: ['plantDeleted'] });
  const id = 9007199254740993n;
  expect((await postPlant(first.url, MAIN_TEST_TOKEN, { id, name: 'Goner', tag: 'brief' })).status).toBe(200);
  const deleted = await fetch(`${first.url}/plants/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${MAIN_TEST_TOKEN}` },
  });
  expect(deleted.status).toBe(204);
  first.child.kill('SIGKILL');
  expect(await first.exited()).toStrictEqual({ code: null, signal: 'SIGKILL' });

  hook.answer({ status: 200 });
  const second = await startMain(env);
  const [delivered, ...others] = await until(
    () => deliveries(second.url, endpoint.id),
    ([delivery]) => delivery?.status === 'delivered',
    15_000,
  );
  expect(others).toStrictEqual([]);
  expect(delivered).toMatchObject({ plantId: id, status: 'delivered' });
  expectOnlyDelivery(
    hook,
    endpoint.secret,
    delivered?.id,
    '{"id":9007199254740993,"plant":{"id":9007199254740993,"name":"Goner","tag":"brief"}}',
  );
};

describe('webhooks in the service process', () => {
  it('delivers a plant acknowledged just before kill -9, after the restart (SQLite)', async () => {
    await deliversAfterKill9({ PLANT_DATA_DIR: makeDataDir('plant-webhook-kill-') });
    // Two process starts: a safety net, generous for a busy machine.
  }, 120_000);

  it('delivers a deletion acknowledged just before kill -9, after the restart (SQLite)', async () => {
    await deliversDeletionAfterKill9({ PLANT_DATA_DIR: makeDataDir('plant-webhook-kill-delete-') });
  }, 120_000);
});

describeWithPostgres('webhooks in the service process on PostgreSQL', () => {
  it('delivers a plant acknowledged just before kill -9, after the restart (PostgreSQL)', async () => {
    const { url } = await freshTestDatabase();
    await deliversAfterKill9({ DATABASE_URL: url, PLANT_DATA_DIR: makeDataDir('plant-webhook-kill-pg-') });
  }, 120_000);

  it('delivers a deletion acknowledged just before kill -9, after the restart (PostgreSQL)', async () => {
    const { url } = await freshTestDatabase();
    await deliversDeletionAfterKill9({
      DATABASE_URL: url,
      PLANT_DATA_DIR: makeDataDir('plant-webhook-kill-delete-pg-'),
    });
  }, 120_000);
});

/** Plants created under load in the two-replica test, each sent to both replicas; at most a page of deliveries. */
const RACED_PLANTS = 600;
/** Keep-alive connections loading each replica. */
const CONNECTIONS_PER_REPLICA = 8;

/**
 * Creates `ids` in order through `connections` keep-alive connections kept busy back to back, and
 * resolves with every answer's status.
 */
const createUnderLoad = async (base: string, ids: readonly bigint[], connections: number): Promise<number[]> => {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const queue = [...ids];
  const statuses: number[] = [];
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          statuses.push((await postPlant(base, MAIN_TEST_TOKEN, { id, name: `Plant ${id}` }, { agent })).status);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return statuses;
};

describeWithPostgres('webhooks with two replicas on one PostgreSQL', () => {
  it('under concurrent load, stores each id once and delivers each event to each endpoint exactly once', async () => {
    const database = await freshTestDatabase();
    const env = { ...WEBHOOK_ENV, DATABASE_URL: database.url };
    const replicas = await Promise.all([startMain(env), startMain(env)]);
    const [a, b] = replicas.map((replica) => replica.url) as [string, string];
    const hooks = [await receiver(), await receiver()];
    const endpoints = [await register(a, hooks[0]?.url ?? ''), await register(b, hooks[1]?.url ?? '')];

    // Both replicas get every id, in the same order and at once: they race for each row while their
    // delivery loops claim and deliver what the batches before announced. One create of each id
    // wins; the other is a replay, which announces nothing.
    const ids = Array.from({ length: RACED_PLANTS }, (_, index) => 9007199254740993n + BigInt(index));
    const answered = await Promise.all([
      createUnderLoad(a, ids, CONNECTIONS_PER_REPLICA),
      createUnderLoad(b, ids, CONNECTIONS_PER_REPLICA),
    ]);
    expect(answered.flat().filter((status) => status !== 200)).toStrictEqual([]);
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ rows: string; ids: string }>(
        'SELECT count(*) AS rows, count(DISTINCT id) AS ids FROM plants WHERE id BETWEEN $1 AND $2',
        [String(ids[0]), String(ids.at(-1))],
      );
      expect(rows[0]).toStrictEqual({ rows: String(RACED_PLANTS), ids: String(RACED_PLANTS) });
    } finally {
      await client.end();
    }

    for (const [index, hook] of hooks.entries()) {
      await hook.waitFor(ids.length, 30_000);
      const list = await until(
        () => deliveries(a, endpoints[index]?.id ?? ''),
        (all) => all.length === ids.length && all.every((delivery) => delivery.status === 'delivered'),
        15_000,
      );
      expect(list.every((delivery) => delivery.attempts === 1)).toBe(true);
    }
    // Both replicas polled the whole time; give a duplicate every chance to show.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (const [index, hook] of hooks.entries()) {
      expect(hook.received).toHaveLength(ids.length);
      const bodies = hook.received.map((request) => request.body).sort();
      expect(bodies).toStrictEqual(ids.map((id) => `{"id":${id},"name":"Plant ${id}"}`).sort());
      const secret = endpoints[index]?.secret ?? '';
      for (const request of hook.received) {
        expect(() => new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
      }
    }
  }, 90_000);
});
