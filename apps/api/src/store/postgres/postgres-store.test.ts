import {
  plantJson,
  stringifyExactJson,
  type WebhookEventType,
  type WebhookPayloadFormat,
  webhookEventBody,
  webhookEventJson,
} from '@org/plant-contract';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { describePlantStore } from '#test/plant-store-suite';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';
import { until } from '#test/until';
import * as migrated from '#test/webhook-store-suite';
import { type CreateOutcome, type StoredPlant, StoreUnavailableError } from '../plant-store.ts';
import { migrate, postgresMigrations } from './migrations.ts';
import {
  createPool,
  describeDatabase,
  isTransientDatabaseError,
  PostgresPlantStore,
  SchemaTooNewError,
} from './postgres-store.ts';

/** Every version this build knows. */
const ALL_VERSIONS = postgresMigrations.map((_, index) => index + 1);
const FUTURE_VERSION = postgresMigrations.length + 10;

describe('PostgreSQL error classification', () => {
  const databaseError = (code: string) => Object.assign(new pg.DatabaseError('failed', 0, 'error'), { code });

  it.each([
    ['08006 connection failure', databaseError('08006')],
    ['57P01 admin shutdown (server restarting)', databaseError('57P01')],
    ['57P03 cannot connect now (starting up)', databaseError('57P03')],
    ['57014 statement timeout', databaseError('57014')],
    ['53300 too many connections', databaseError('53300')],
    ['40001 serialization failure', databaseError('40001')],
    ['25006 read-only transaction (a failover in progress)', databaseError('25006')],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a broken pipe', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })],
    ['a connect timeout', new Error('timeout exceeded when trying to connect')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
  ])('treats %s as unavailable (503)', (_label, error) => {
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it.each([
    ['23505 unique violation', databaseError('23505')],
    ['42P01 undefined table', databaseError('42P01')],
    ['22021 bad encoding', databaseError('22021')],
    ['a TypeError', new TypeError('x is not a function')],
  ])('treats %s as a bug (500)', (_label, error) => {
    expect(isTransientDatabaseError(error)).toBe(false);
  });

  it('describes a database by host and name, never by user or password', () => {
    expect(describeDatabase('postgres://plants:s3cret@db.internal:6432/plants?sslmode=require')).toBe(
      'db.internal:6432/plants',
    );
    expect(describeDatabase('not a url with s3cret')).toBe('the configured database');
  });
});

describeWithPostgres('PostgresPlantStore', () => {
  describePlantStore('PostgresPlantStore', async () => {
    const database = await freshDatabase();
    const store = await PostgresPlantStore.open({ url: database.url, poolSize: 5 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        await database.drop();
      },
    };
  });

  const databases: TestDatabase[] = [];
  const stores: PostgresPlantStore[] = [];
  const clients: pg.Client[] = [];

  const database = async (): Promise<TestDatabase> => {
    const created = await freshDatabase();
    databases.push(created);
    return created;
  };
  const openStore = async (
    url: string,
    options: { migrate?: boolean; poolSize?: number; maxPending?: number } = {},
  ): Promise<PostgresPlantStore> => {
    const store = await PostgresPlantStore.open({ url, poolSize: 3, ...options });
    stores.push(store);
    return store;
  };
  const connect = async (url: string): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url });
    clients.push(client);
    await client.connect();
    return client;
  };
  /** A connection to a database migrated up to, not including, the first migration whose SQL has `marker`. */
  const migratedBefore = async (url: string, marker: string): Promise<pg.Client> => {
    const before = postgresMigrations.findIndex((sql) => sql.includes(marker));
    const client = await connect(url);
    await client.query('CREATE TABLE plant_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz)');
    for (const [index, sql] of postgresMigrations.slice(0, before).entries()) {
      await client.query(sql);
      await client.query('INSERT INTO plant_schema_migrations VALUES ($1, now())', [index + 1]);
    }
    return client;
  };
  const appliedVersions = async (url: string): Promise<number[]> => {
    const client = await connect(url);
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM plant_schema_migrations ORDER BY version',
    );
    return rows.map((row) => row.version);
  };

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end().catch(() => {});
    for (const store of stores.splice(0)) await store.close();
    for (const created of databases.splice(0)) await created.drop();
  });

  it('migrates a fresh database exactly once when eight sessions migrate at the same moment', async () => {
    const { url } = await database();
    const sessions = await Promise.all(Array.from({ length: 8 }, () => connect(url)));
    const applied = await Promise.all(sessions.map((session) => migrate(session)));
    expect(applied.filter((versions) => versions.length > 0)).toStrictEqual([ALL_VERSIONS]);
    expect(applied.filter((versions) => versions.length === 0)).toHaveLength(7);
    expect(await appliedVersions(url)).toStrictEqual(ALL_VERSIONS);
  });

  it.each([
    ['a plain URL', ''],
    ['a URL with options of its own, which still apply', '?options=-c%20work_mem%3D5MB'],
  ])('turns JIT off in every session, whatever the database says, from %s', async (_label, query) => {
    const { url } = await database();
    const admin = await connect(url);
    await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(new URL(url).pathname.slice(1))} SET jit = on`);
    const pool = createPool({ url: `${url}${query}` });
    try {
      // Three at once: three sessions, each set up on its own.
      const settings = await Promise.all(
        [1, 2, 3].map(async () => {
          const { rows } = await pool.query<{ jit: string; work_mem: string }>(
            "SELECT current_setting('jit') AS jit, current_setting('work_mem') AS work_mem, pg_sleep(0.05)",
          );
          return rows[0];
        }),
      );
      const workMem = query === '' ? (await admin.query('SHOW work_mem')).rows[0].work_mem : '5MB';
      expect(settings).toStrictEqual(Array(3).fill({ jit: 'off', work_mem: workMem, pg_sleep: '' }));
      expect(pool.totalCount).toBe(3);
    } finally {
      await pool.end();
    }
  });

  it('leaves the session it migrated as it found it: its statement timeout, and no lock held', async () => {
    const { url } = await database();
    const session = await connect(url);
    await session.query('SET statement_timeout = 1234');
    expect(await migrate(session)).toStrictEqual(ALL_VERSIONS);
    const { rows } = await session.query<{ timeout: string; locks: number }>(
      `SELECT current_setting('statement_timeout') AS timeout,
        (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks`,
    );
    expect(rows).toStrictEqual([{ timeout: '1234ms', locks: 0 }]);
  });

  it('applies the pending migrations together or not at all: one that fails leaves the schema as it was', async () => {
    const { url } = await database();
    const client = await migratedBefore(url, 'CREATE INDEX plants_tag_id');
    // The outbox's tables, made by hand: the migration that creates them fails, after the index's.
    await client.query('CREATE TABLE webhook_endpoints (id text)');
    await expect(PostgresPlantStore.open({ url })).rejects.toThrow(
      /^Cannot prepare the schema of PostgreSQL at .*: relation "webhook_endpoints" already exists/,
    );
    expect(await appliedVersions(url)).toStrictEqual([1]);
    const { rows } = await client.query("SELECT to_regclass('plants_tag_id') AS index");
    expect(rows).toStrictEqual([{ index: null }]);
  });

  it('opens eight stores on a fresh database at once, all serving the same plants', async () => {
    const { url } = await database();
    const opened = await Promise.all(Array.from({ length: 8 }, () => openStore(url)));
    expect(await appliedVersions(url)).toStrictEqual(ALL_VERSIONS);
    await opened[0]?.create({ id: 1n, name: 'Monstera' });
    for (const store of opened) expect(await store.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera' });
  });

  it('keeps plants across close and reopen without migrating again', async () => {
    const { url } = await database();
    const first = await openStore(url);
    await first.create({ id: -(2n ** 63n), name: 'Smallest', tag: 'edge' });
    await first.close();
    const second = await openStore(url);
    expect(await second.get(-(2n ** 63n))).toStrictEqual({ id: -(2n ** 63n), name: 'Smallest', tag: 'edge' });
    expect(await appliedVersions(url)).toStrictEqual(ALL_VERSIONS);
  });

  it('gives the endpoints registered before ownership to the operator', async () => {
    const { url } = await database();
    const client = await migratedBefore(url, 'ADD COLUMN owner');
    await client.query(`INSERT INTO webhook_endpoints (id, url, secret, created_at)
      VALUES ('ep_before', 'https://hooks.example.com/a', 'whsec_a', now() - interval '1 hour')`);
    await migrated.expectEndpointsGivenToOperator(await openStore(url));
  });

  it('reads one owner’s endpoints through its index, not the whole table', async () => {
    const { url } = await database();
    await (await openStore(url)).close();
    const session = await connect(url);
    // 10,000 endpoints of 100 owners, 100 each.
    await session.query(`INSERT INTO webhook_endpoints (id, url, secret, created_at, owner)
      SELECT 'ep_' || n, 'https://hooks.example.com/' || n, 'whsec_a', now(), 'token:team-' || (n % 100)
      FROM generate_series(1, 10000) AS n`);
    await session.query('ANALYZE webhook_endpoints');
    const scans = async () =>
      (
        await session.query<{ seq: string; idx: string }>(
          `SELECT seq_scan AS seq, idx_scan AS idx FROM pg_stat_user_tables WHERE relname = 'webhook_endpoints'`,
        )
      ).rows[0];
    const before = await scans();
    const store = await PostgresPlantStore.open({ url, poolSize: 1, migrate: false });
    expect(await store.webhooks.listEndpoints('token:team-7')).toHaveLength(100);
    // A session flushes its statistics as it ends.
    await store.close();
    const after = await until(scans, (now) => Number(now?.idx) > Number(before?.idx));
    expect(Number(after?.seq) - Number(before?.seq)).toBe(0);
  });

  it('counts the receivers of each type from the endpoints registered before, and follows every change', async () => {
    const { url } = await database();
    const client = await migratedBefore(url, 'webhook_event_receivers');
    await client.query(`INSERT INTO webhook_endpoints (id, url, secret, created_at, event_types, enabled) VALUES
      ('ep_both', 'https://hooks.example.com/a', 'whsec_a', now() - interval '1 hour', 'newPlant,plantDeleted', true),
      ('ep_created', 'https://hooks.example.com/b', 'whsec_a', now() - interval '1 hour', 'newPlant', true),
      ('ep_off', 'https://hooks.example.com/c', 'whsec_a', now() - interval '1 hour', 'plantDeleted', false)`);
    const store = await openStore(url);
    const receivers = async () =>
      Object.fromEntries(
        (
          await client.query<{ type: string; endpoints: number }>(
            'SELECT type, endpoints FROM webhook_event_receivers WHERE endpoints <> 0 ORDER BY type',
          )
        ).rows.map(({ type, endpoints }) => [type, endpoints]),
      );
    expect(await receivers()).toStrictEqual({ newPlant: 2, plantDeleted: 1 });
    await store.webhooks.updateEndpoint('ep_both', { enabled: false });
    expect(await receivers()).toStrictEqual({ newPlant: 1 });
    await store.webhooks.updateEndpoint('ep_off', { enabled: true, description: 'back' });
    expect(await receivers()).toStrictEqual({ newPlant: 1, plantDeleted: 1 });
    await store.webhooks.updateEndpoint('ep_created', { eventTypes: ['plantDeleted', 'newPlant'] });
    await store.webhooks.updateEndpoint('ep_created', { eventTypes: ['plantDeleted'] });
    expect(await receivers()).toStrictEqual({ plantDeleted: 2 });
    await store.webhooks.disableEndpoint('ep_created', 'The receiver answered 410 Gone.');
    await store.webhooks.deleteEndpoint('ep_off');
    expect(await receivers()).toStrictEqual({});
    const created = await store.webhooks.createEndpoint(
      { id: 'ep_new', url: 'https://hooks.example.com/d', secret: 'whsec_a', owner: 'operator' },
      { perOwner: 10, total: 10 },
    );
    expect(created.outcome).toBe('created');
    expect(await receivers()).toStrictEqual({ newPlant: 1 });
    // Announced exactly while an enabled endpoint receives the type.
    await store.create({ id: 1n, name: 'Fern' });
    expect(await store.delete(1n)).toBe(true);
    await store.webhooks.updateEndpoint('ep_new', { eventTypes: ['plantDeleted'] });
    await store.create({ id: 2n, name: 'Ivy' });
    expect(await store.delete(2n)).toBe(true);
    const deliveries = (await store.webhooks.listDeliveries('ep_new', 10)) ?? [];
    expect(deliveries.map(({ type, plantId }) => `${type} ${plantId}`).sort()).toStrictEqual([
      'newPlant 1',
      'plantDeleted 2',
    ]);
  });

  it('turns the plants, events and deliveries of the previous schema into their JSON text, byte for byte', async () => {
    const { url } = await database();
    const client = await migratedBefore(url, 'RENAME COLUMN name TO plant');
    const plants: StoredPlant[] = [
      { id: 9007199254740993n, name: 'Über "quoted" \\ fern ☘️ \u2028', tag: 'grün 🌿 <tag>' },
      { id: -9223372036854775808n, name: 'Lowest\u007f' },
      { id: 9223372036854775807n, name: '日本の植物', tag: '' },
    ];
    for (const { id, name, tag } of plants) {
      await client.query('INSERT INTO plants (id, name, tag) VALUES ($1, $2, $3)', [id.toString(), name, tag ?? null]);
    }
    const formats: WebhookPayloadFormat[] = ['plain', 'standard'];
    for (const format of formats) {
      await client.query(
        `INSERT INTO webhook_endpoints (id, url, secret, created_at, event_types, payload_format)
         VALUES ($1, $2, 'whsec_a', now() - interval '1 hour', 'newPlant,plantDeleted', $3)`,
        [`ep_${format}`, `https://hooks.example.com/${format}`, format],
      );
    }
    // Announced and not yet fanned out, and fanned out and still pending, of both types.
    const announced: [WebhookEventType, StoredPlant][] = [
      ['newPlant', plants[0] as StoredPlant],
      ['plantDeleted', plants[1] as StoredPlant],
    ];
    for (const [type, { id, name, tag }] of announced) {
      await client.query('INSERT INTO webhook_events (type, plant_id, name, tag) VALUES ($1, $2, $3, $4)', [
        type,
        id.toString(),
        name,
        tag ?? null,
      ]);
    }
    const pending: [WebhookEventType, StoredPlant][] = [
      ['newPlant', plants[2] as StoredPlant],
      ['plantDeleted', plants[0] as StoredPlant],
    ];
    for (const format of formats) {
      for (const [type, { id, name, tag }] of pending) {
        await client.query(
          `INSERT INTO webhook_deliveries (endpoint_id, type, plant_id, name, tag, next_attempt_at)
           VALUES ($1, $2, $3, $4, $5, now() - interval '1 minute')`,
          [`ep_${format}`, type, id.toString(), name, tag ?? null],
        );
      }
    }

    const store = await openStore(url);
    for (const plant of plants) expect(await store.get(plant.id)).toStrictEqual(plant);
    const { rows } = await client.query<{ plant: string }>('SELECT plant FROM plants ORDER BY id');
    expect(rows.map((row) => row.plant)).toStrictEqual(
      [...plants].sort((a, b) => (a.id < b.id ? -1 : 1)).map((plant) => plantJson(plant)),
    );
    const claimed = await store.webhooks.claimDue({ limit: 100, leaseMs: 60_000, perEndpoint: 100, room: new Map() });
    const byId = new Map(plants.map((plant) => [plant.id, plant]));
    // Each body as the previous release built it from the plant's columns, and as this one from the data.
    const bodies = (build: (delivery: (typeof claimed)[number]) => string) =>
      claimed.map((delivery) => `${delivery.endpointId} ${delivery.type} ${build(delivery)}`).sort();
    expect(claimed).toHaveLength(2 * (announced.length + pending.length));
    expect(
      bodies((delivery) => webhookEventJson(delivery.type, delivery.payloadFormat, delivery.data, delivery.createdAt)),
    ).toStrictEqual(
      bodies((delivery) =>
        stringifyExactJson(
          webhookEventBody(
            delivery.type,
            delivery.payloadFormat,
            byId.get(delivery.plantId) as StoredPlant,
            delivery.createdAt,
          ),
        ),
      ),
    );
    expect((await store.list({ limit: 10 })).map(({ id }) => id)).toStrictEqual(
      [...plants].map(({ id }) => id).sort((a, b) => (a < b ? -1 : 1)),
    );
  });

  it('keeps endpoints that shared a URL before URLs were unique, and refuses new duplicates', async () => {
    const { url } = await database();
    const client = await migratedBefore(url, 'duplicate_url');
    await client.query(`INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES
      ('ep_old', 'https://hooks.example.com/a', 'whsec_a', now() - interval '1 hour'),
      ('ep_dup', 'https://hooks.example.com/a', 'whsec_b', now())`);
    await migrated.expectDuplicateUrlsKept(await openStore(url));
  });

  it('delivers an announcement written before traceparents were kept, without one', async () => {
    const { url } = await database();
    const client = await migratedBefore(url, 'traceparent');
    await client.query(`INSERT INTO webhook_endpoints (id, url, secret, created_at)
      VALUES ('ep_before', 'https://hooks.example.com/a', 'whsec_a', now() - interval '1 hour');
      INSERT INTO webhook_events (plant_id, name) VALUES (7, 'Announced')`);
    await migrated.expectOutboxKeptWithoutTraceparent(await openStore(url));
  });

  it('keeps a traced create’s traceparent with its announcement across a reopen', async () => {
    const { url } = await database();
    const traced = await PostgresPlantStore.open({ url, poolSize: 3, tracing: migrated.fixedTracing });
    stores.push(traced);
    await migrated.expectTraceparentKept(traced, () => openStore(url));
  });

  it('upgrades a version 1 database in place, keeping its plants', async () => {
    const { url } = await database();
    const client = await connect(url);
    await client.query('CREATE TABLE plant_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz)');
    await client.query(postgresMigrations[0] as string);
    await client.query(
      "INSERT INTO plants VALUES (9007199254740993, 'Old', 'a'); INSERT INTO plant_schema_migrations VALUES (1, now())",
    );
    const store = await openStore(url);
    expect(await store.list({ limit: 10, tag: 'a' })).toStrictEqual([{ id: 9007199254740993n, name: 'Old', tag: 'a' }]);
    expect(await appliedVersions(url)).toStrictEqual(ALL_VERSIONS);
  });

  it('refuses a database whose schema is newer than this build, and leaves it untouched', async () => {
    const { url } = await database();
    await openStore(url);
    const client = await connect(url);
    await client.query('INSERT INTO plant_schema_migrations (version) VALUES ($1)', [FUTURE_VERSION]);
    const opening = PostgresPlantStore.open({ url });
    await expect(opening).rejects.toBeInstanceOf(SchemaTooNewError);
    await expect(opening).rejects.toThrow(
      `The database schema is at version ${FUTURE_VERSION}, newer than this build knows (${postgresMigrations.length}); run a newer release.`,
    );
    expect(await appliedVersions(url)).toStrictEqual([...ALL_VERSIONS, FUTURE_VERSION]);
  });

  it('without migrating at open, refuses an unmigrated database and names the migrate command', async () => {
    const { url } = await database();
    await expect(PostgresPlantStore.open({ url, migrate: false })).rejects.toThrow(
      `The database schema is at version 0, older than this build needs (${postgresMigrations.length}); run the migrations (pnpm --filter @org/plant-api migrate).`,
    );
    await openStore(url);
    const store = await openStore(url, { migrate: false });
    await expect(store.health()).resolves.toBeUndefined();
  });

  it('reports unhealthy when the schema is gone, and healthy again once it is back', async () => {
    const { url } = await database();
    const store = await openStore(url);
    const client = await connect(url);
    await client.query('ALTER TABLE plant_schema_migrations RENAME TO moved_away');
    await expect(store.health()).rejects.toBeInstanceOf(StoreUnavailableError);
    await client.query('ALTER TABLE moved_away RENAME TO plant_schema_migrations');
    await expect(store.health()).resolves.toBeUndefined();
  });

  it('stores exactly one plant when stores with separate connection pools race on one id', async () => {
    const { url } = await database();
    const racers = await Promise.all(Array.from({ length: 4 }, () => openStore(url)));
    for (let round = 0n; round < 20n; round++) {
      const attempts: StoredPlant[] = Array.from({ length: 12 }, (_, index) => ({
        id: 2n ** 62n + round,
        name: index % 2 === 0 ? 'Even' : 'Odd',
      }));
      const results: CreateOutcome[] = await Promise.all(
        attempts.map((plant, index) => (racers[index % racers.length] as PostgresPlantStore).create(plant)),
      );
      const created = results.filter((result) => result.outcome === 'created');
      expect(created).toHaveLength(1);
      const winner = (created[0] as { plant: StoredPlant }).plant;
      for (const [index, result] of results.entries()) {
        if (result.outcome === 'created') continue;
        expect(result).toStrictEqual(
          attempts[index]?.name === winner.name
            ? { outcome: 'replayed', plant: winner }
            : { outcome: 'conflict', existing: winner },
        );
      }
      expect(await racers[0]?.get(winner.id)).toStrictEqual(winner);
    }
  });

  it('holds a rate-limited endpoint to its limit across stores that claim at once, as replicas do', async () => {
    const { url } = await database();
    const [first, second] = [await openStore(url), await openStore(url)];
    const endpoint = {
      id: 'ep_rated',
      url: 'https://hooks.example.com/rated',
      secret: 'whsec_a',
      owner: 'operator',
      rateLimit: 5,
    };
    await first.webhooks.createEndpoint(endpoint, { perOwner: 100, total: 10_000 });
    await Promise.all(Array.from({ length: 60 }, (_, index) => first.create({ id: BigInt(index + 1), name: 'Rated' })));
    const claim = (store: PostgresPlantStore) =>
      store.webhooks.claimDue({ limit: 100, leaseMs: 600_000, perEndpoint: 100, room: new Map() });
    const started = Date.now();
    let total = 0;
    for (let round = 0; round < 10; round++)
      for (const claimed of await Promise.all([claim(first), claim(second), claim(first), claim(second)]))
        total += claimed.length;
    const seconds = (Date.now() - started) / 1000;
    // Each claim read and advanced the endpoint's TAT alone: a burst of 5 in all, then 5 a second.
    expect(total).toBeGreaterThanOrEqual(5);
    expect(total).toBeLessThanOrEqual(5 + 5 * seconds);
  });

  it('never waits for a rate-limited endpoint another session holds: its deliveries wait, the others go', async () => {
    const { url } = await database();
    const store = await openStore(url);
    await store.webhooks.createEndpoint(
      { id: 'ep_held', url: 'https://hooks.example.com/held', secret: 'whsec_a', owner: 'operator', rateLimit: 5 },
      { perOwner: 100, total: 10_000 },
    );
    await store.webhooks.createEndpoint(
      { id: 'ep_free', url: 'https://hooks.example.com/free', secret: 'whsec_b', owner: 'operator' },
      { perOwner: 100, total: 10_000 },
    );
    await store.create({ id: 1n, name: 'Announced' });
    const claim = () => store.webhooks.claimDue({ limit: 100, leaseMs: 600_000, perEndpoint: 100, room: new Map() });
    // A session holding the endpoint's row, as another replica's claim or a PATCH does for a moment.
    const holder = await connect(url);
    await holder.query(`BEGIN; SELECT 1 FROM webhook_endpoints WHERE id = 'ep_held' FOR NO KEY UPDATE`);
    expect((await claim()).map((delivery) => delivery.endpointId)).toStrictEqual(['ep_free']);
    await holder.query('COMMIT');
    expect((await claim()).map((delivery) => delivery.endpointId)).toStrictEqual(['ep_held']);
  });

  it('reads the receivers of deletions once, and neither the endpoints nor the outbox, to delete a plant while no endpoint receives deletions', async () => {
    const { url } = await database();
    const session = await connect(url);
    // A session flushes its statistics as it ends: counts read once the store's sessions are gone are
    // whole. Only this database's: other test files run stores of their own on the same server.
    const closed = async (store: PostgresPlantStore) => {
      await store.close();
      await until(
        async () =>
          (
            await session.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'plant-api'",
            )
          ).rows[0]?.n,
        (sessions) => sessions === 0,
      );
      const { rows } = await session.query<{ relname: string; reads: string; written: string }>(
        `SELECT relname, seq_scan + coalesce(idx_scan, 0) AS reads, n_tup_ins + n_tup_upd + n_tup_del AS written
         FROM pg_stat_user_tables
         WHERE relname IN ('webhook_endpoints', 'webhook_event_receivers', 'webhook_events', 'webhook_deliveries')`,
      );
      return Object.fromEntries(rows.map(({ relname, reads, written }) => [relname, Number(reads) + Number(written)]));
    };
    const setUp = await PostgresPlantStore.open({ url, poolSize: 3 });
    // The most endpoints there may be, every one receiving creates only.
    for (let index = 0; index < 100; index++) {
      await setUp.webhooks.createEndpoint(
        { id: `ep_${index}`, url: `https://hooks.example.com/${index}`, secret: 'whsec_a', owner: 'operator' },
        { perOwner: 100, total: 10_000 },
      );
    }
    for (let id = 1n; id <= 10n; id++) await setUp.create({ id, name: `Plant ${id}` });
    await session.query('ANALYZE webhook_event_receivers');
    const before = await closed(setUp);
    const store = await PostgresPlantStore.open({ url, poolSize: 3, migrate: false });
    for (let id = 1n; id <= 10n; id++) expect(await store.delete(id)).toBe(true);
    const after = await closed(store);
    // One look each at the count of endpoints receiving deletions (one row of a table of a few,
    // however many endpoints there are), nothing else read or written.
    expect({
      endpoints: (after.webhook_endpoints ?? 0) - (before.webhook_endpoints ?? 0),
      receivers: (after.webhook_event_receivers ?? 0) - (before.webhook_event_receivers ?? 0),
      events: (after.webhook_events ?? 0) - (before.webhook_events ?? 0),
      deliveries: (after.webhook_deliveries ?? 0) - (before.webhook_deliveries ?? 0),
    }).toStrictEqual({ endpoints: 0, receivers: 10, events: 0, deliveries: 0 });
  });

  it('answers a batch that mixes new, replayed and conflicting plants, each by its own row', async () => {
    const store = await openStore((await database()).url);
    const stored = Array.from({ length: 4 }, (_, index) => ({ id: BigInt(index + 1), name: `Stored ${index + 1}` }));
    for (const plant of stored) await store.create(plant);
    // One turn of the event loop: a single statement, in which some ids are taken and some not.
    const outcomes = await Promise.all([
      store.create({ id: 1n, name: 'Stored 1' }),
      store.create({ id: 2n, name: 'Someone else', tag: 'other' }),
      store.create({ id: 5n, name: 'New 5' }),
      store.create({ id: 3n, name: 'Stored 3' }),
      store.create({ id: 6n, name: 'New 6', tag: 'fresh' }),
    ]);
    expect(outcomes).toStrictEqual([
      { outcome: 'replayed', plant: stored[0] },
      { outcome: 'conflict', existing: stored[1] },
      { outcome: 'created', plant: { id: 5n, name: 'New 5' } },
      { outcome: 'replayed', plant: stored[2] },
      { outcome: 'created', plant: { id: 6n, name: 'New 6', tag: 'fresh' } },
    ]);
    expect(await store.get(2n)).toStrictEqual(stored[1]);
  });

  it('runs one batch statement at a time: the creates that arrive while it runs share the next one', async () => {
    const { url } = await database();
    const store = await openStore(url);
    const blocker = await connect(url);
    const inserter = await connect(url);
    // An uncommitted insert of id 1 holds the first batch's statement on its row lock.
    await blocker.query('BEGIN');
    await blocker.query(`INSERT INTO plants (id, plant) VALUES (1, '{"id":1,"name":"Held"}')`);
    const first = Promise.all([store.create({ id: 1n, name: 'Held' }), store.create({ id: 2n, name: 'First 2' })]);
    const waitingOnLock = async () => {
      const { rows } = await inserter.query<{ count: string }>(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return Number(rows[0]?.count);
    };
    while ((await waitingOnLock()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Three turns of the event loop, each with two creates: before, each turn had its own statement.
    const later: Promise<unknown>[] = [];
    for (let turn = 0; turn < 3; turn++) {
      later.push(store.create({ id: BigInt(10 + 2 * turn), name: 'Later' }));
      later.push(store.create({ id: BigInt(11 + 2 * turn), name: 'Later' }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await blocker.query('COMMIT');
    expect((await first).map((outcome) => outcome.outcome)).toStrictEqual(['replayed', 'created']);
    await Promise.all(later);
    // Rows inserted by one statement share its transaction id.
    const { rows } = await inserter.query<{ id: string; xmin: string }>(
      'SELECT id, xmin::text FROM plants WHERE id >= 2 ORDER BY id',
    );
    const laterTransactions = new Set(rows.filter((row) => Number(row.id) >= 10).map((row) => row.xmin));
    expect(rows).toHaveLength(7);
    expect(laterTransactions.size).toBe(1);
    expect(laterTransactions.has(rows[0]?.xmin ?? '')).toBe(false);
  });

  it('refuses to open with one clear line when its role may not create the schema', async () => {
    const { url, name } = await database();
    const admin = await connect(url);
    const role = `${name}_reader`;
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    try {
      const asReader = new URL(url);
      asReader.username = role;
      const opening = PostgresPlantStore.open({ url: asReader.toString() });
      await expect(opening).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(opening).rejects.toThrow(
        `Cannot prepare the schema of PostgreSQL at ${describeDatabase(url)}: permission denied for schema public (42501)`,
      );
    } finally {
      await admin.query(`DROP ROLE ${role}`);
    }
  });

  it('fails to open with StoreUnavailableError within the connect timeout when nothing listens', async () => {
    // Port 1 on loopback: connection refused at once. The password must not leak into the message.
    const started = Date.now();
    const opening = PostgresPlantStore.open({
      url: 'postgres://plants:s3cret-password@127.0.0.1:1/plants',
      connectTimeoutMs: 2_000,
    });
    await expect(opening).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(opening).rejects.toThrow(/^Cannot connect to PostgreSQL at 127\.0\.0\.1:1\/plants: /);
    await expect(opening).rejects.toThrow(expect.objectContaining({ message: expect.not.stringContaining('s3cret') }));
    // Refused at once, so the open fails without retrying: the bound tells that from retrying
    // for ever, generously (the connect timeout and 5 s more) so that a busy machine cannot fail it.
    expect(Date.now() - started).toBeLessThan(2_000 + 5_000);
  });

  it('answers unavailable, not a crash, when its sessions are terminated, and serves again right after', async () => {
    const { url, name } = await database();
    const store = await openStore(url);
    await store.create({ id: 1n, name: 'Before' });
    const admin = await connect(url);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    // The pool notices the dead idle sessions and opens new ones: nothing is lost, nothing hangs.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, (_, index) => store.create({ id: BigInt(10 + index), name: 'After' })),
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(StoreUnavailableError);
    }
    expect((await store.create({ id: 2n, name: 'Later' })).outcome).toBe('created');
    expect(await store.get(1n)).toStrictEqual({ id: 1n, name: 'Before' });
  });

  it('refuses operations beyond maxPending at once, so the pool never queues more than that', async () => {
    const { url } = await database();
    const store = await openStore(url, { poolSize: 1, maxPending: 3 });
    await store.create({ id: 1n, name: 'Before' });
    // Another session holds the table: the store's one connection waits on it, the rest queue.
    const admin = await connect(url);
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE plants IN ACCESS EXCLUSIVE MODE');
    const pending = [1n, 2n, 3n].map((id) => store.get(id));
    const refused = await Promise.allSettled([store.get(4n), store.create({ id: 5n, name: 'Refused' })]);
    for (const outcome of refused) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
      expect((outcome as PromiseRejectedResult).reason.message).toMatch(/3 operations pending/);
    }
    expect(store.poolStats().waiting).toBeLessThanOrEqual(3);
    await admin.query('COMMIT');
    expect(await Promise.all(pending)).toStrictEqual([{ id: 1n, name: 'Before' }, undefined, undefined]);
    expect(await store.get(5n)).toBeUndefined();
  });
});
