import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { stringifyExactJson, WEBHOOK_ENDPOINTS_MAX, WEBHOOK_EVENTS, WEBHOOK_URL_MAX_LENGTH } from '@org/plant-contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LARGEST_DESCRIPTION, LARGEST_NAME, LARGEST_TAG } from '#test/largest-values';
import { manualClock } from '#test/manual-clock';
import { describePlantStore } from '#test/plant-store-suite';
import { type ChildResult, runToEnd } from '#test/run-to-end';
import { SOURCE_NODE_FLAGS } from '#test/source-node-flags';
import { until } from '#test/until';
import * as migrated from '#test/webhook-store-suite';
import type { Clock } from '../../clock.ts';
import { type StoredPlant, StoreUnavailableError } from '../plant-store.ts';
import { DataDirInUseError, MAX_RESTARTS, RESTART_DELAY_MS, SQLITE_FILE_NAME } from './database-thread.ts';
import { sqliteMigrations } from './migrations.ts';
import { SqlitePlantStore } from './sqlite-store.ts';

const RESTARTING = 'The embedded database stopped unexpectedly and is restarting; retry later.';

const STORE_MODULE = join(import.meta.dirname, 'sqlite-store.ts');
const PLANT_STORE_MODULE = join(import.meta.dirname, '../plant-store.ts');
const CHILD_TIMEOUT_MS = 10_000;

const makeDataDir = (): string => mkdtempSync(join(tmpdir(), 'plant-sqlite-test-'));

/** Runs an inline ESM script in a fresh Node process (another process, so other OS locks). */
const runNode = (script: string, args: string[] = [], shellPrefix?: string): Promise<ChildResult> => {
  const nodeArgs = [...SOURCE_NODE_FLAGS, '--input-type=module', '--eval', script, '--', ...args];
  return shellPrefix === undefined
    ? runToEnd(process.execPath, nodeArgs, { timeoutMs: CHILD_TIMEOUT_MS })
    : // `exec` keeps the shell's resource limits but makes Node the process that runs the script.
      runToEnd('/bin/sh', ['-c', `${shellPrefix}; exec "$0" "$@"`, process.execPath, ...nodeArgs], {
        timeoutMs: CHILD_TIMEOUT_MS,
      });
};

/** A child that tries to open the store in `dataDir` and prints the outcome as one JSON line. */
const openInAnotherProcess = async (dataDir: string): Promise<{ opened: boolean; name?: string; message?: string }> => {
  const script = `
    const { SqlitePlantStore } = await import(${JSON.stringify(STORE_MODULE)});
    try {
      const store = await SqlitePlantStore.open(process.argv[1]);
      await store.close();
      console.log(JSON.stringify({ opened: true }));
    } catch (error) {
      console.log(JSON.stringify({ opened: false, name: error.name, message: error.message }));
    }
  `;
  const result = await runNode(script, [dataDir]);
  expect(result, result.stderr).toMatchObject({ code: 0 });
  return JSON.parse(result.stdout);
};

const userVersion = (dataDir: string): number => {
  const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME), { readOnly: true });
  try {
    return (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  } finally {
    db.close();
  }
};

/**
 * Commits in the write-ahead log so far: only a commit frame records the database size in its
 * header, and frames left over from before a WAL reset carry other salts than the header.
 */
const walCommits = (dataDir: string): number => {
  const wal = readFileSync(join(dataDir, `${SQLITE_FILE_NAME}-wal`));
  const frameSize = 24 + wal.readUInt32BE(8);
  let commits = 0;
  for (let at = 32; at + frameSize <= wal.length; at += frameSize) {
    if (wal.readUInt32BE(at + 8) !== wal.readUInt32BE(16) || wal.readUInt32BE(at + 12) !== wal.readUInt32BE(20)) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits += 1;
  }
  return commits;
};

const plantsFrom = (first: number, count: number) =>
  Array.from({ length: count }, (_, index) => ({ id: BigInt(first + index), name: `Plant ${first + index}` }));

describePlantStore('SqlitePlantStore', async () => {
  const dataDir = makeDataDir();
  const store = await SqlitePlantStore.open(dataDir);
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe('SqlitePlantStore', () => {
  let root: string;
  let dataDir: string;
  const openStores: SqlitePlantStore[] = [];
  const openStore = async (options: { clock?: Clock } = {}): Promise<SqlitePlantStore> => {
    const store = await SqlitePlantStore.open(dataDir, options);
    openStores.push(store);
    return store;
  };

  beforeEach(() => {
    root = makeDataDir();
    dataDir = root;
  });

  afterEach(async () => {
    for (const store of openStores.splice(0)) await store.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('creates the data directory when it does not exist yet', async () => {
    dataDir = join(dataDir, 'nested', 'plants');
    const store = await openStore();
    expect((await store.create({ id: 1n, name: 'Monstera' })).outcome).toBe('created');
  });

  it('keeps plants across close and reopen, and replays them afterwards', async () => {
    const first = await openStore();
    await first.create({ id: 1n, name: 'Monstera', tag: 'indoor' });
    await first.create({ id: -(2n ** 63n), name: 'Smallest' });
    await first.create({ id: 9007199254740993n, name: 'Beyond double precision' });
    await first.close();

    const second = await openStore();
    expect(await second.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera', tag: 'indoor' });
    expect(await second.get(-(2n ** 63n))).toStrictEqual({ id: -(2n ** 63n), name: 'Smallest' });
    expect(await second.get(9007199254740993n)).toStrictEqual({
      id: 9007199254740993n,
      name: 'Beyond double precision',
    });
    expect(await second.get(9007199254740992n)).toBeUndefined();
    expect(await second.create({ id: 1n, name: 'Monstera', tag: 'indoor' })).toMatchObject({ outcome: 'replayed' });
    expect(await second.create({ id: 1n, name: 'Monstera' })).toMatchObject({ outcome: 'conflict' });
  });

  it('refuses a second process on the same data directory while open, and lets it in after close', async () => {
    const store = await openStore();
    await store.create({ id: 1n, name: 'Monstera' });

    const refused = await openInAnotherProcess(dataDir);
    expect(refused).toStrictEqual({
      opened: false,
      name: 'DataDirInUseError',
      message: new DataDirInUseError(
        `The data directory ${dataDir} is in use by another Plant Store process; stop it or set PLANT_DATA_DIR to another directory.`,
      ).message,
    });
    // The refused process must not have disturbed the owner.
    expect(await store.create({ id: 2n, name: 'Fern' })).toMatchObject({ outcome: 'created' });
    expect(await store.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera' });

    await store.close();
    expect(await openInAnotherProcess(dataDir)).toStrictEqual({ opened: true });
  }, 20_000);

  it('records the newest schema version and does not run migrations again on reopen', async () => {
    const first = await openStore();
    await first.create({ id: 7n, name: 'Aloe' });
    await first.close();
    expect(userVersion(dataDir)).toBe(sqliteMigrations.length);

    // Running the CREATE TABLE again would throw on reopen; the data would not survive a re-creation.
    const second = await openStore();
    expect(await second.get(7n)).toStrictEqual({ id: 7n, name: 'Aloe' });
    await second.close();
    expect(userVersion(dataDir)).toBe(sqliteMigrations.length);
  });

  it('upgrades a version 1 database in place, keeping its plants', async () => {
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    db.exec(sqliteMigrations[0] as string);
    db.exec(`INSERT INTO plants (id, name, tag) VALUES (9007199254740993, 'Old', 'a'); PRAGMA user_version = 1`);
    db.close();

    const store = await openStore();
    expect(await store.list({ limit: 10, tag: 'a' })).toStrictEqual([{ id: 9007199254740993n, name: 'Old', tag: 'a' }]);
    await store.close();
    expect(userVersion(dataDir)).toBe(sqliteMigrations.length);
  });

  it('gives the endpoints registered before ownership to the operator', async () => {
    const owned = sqliteMigrations.findIndex((sql) => sql.includes('ADD COLUMN owner'));
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    for (const sql of sqliteMigrations.slice(0, owned)) db.exec(sql);
    db.exec(`INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES ('ep_before', 'https://hooks.example.com/a', 'whsec_a', 1);
      PRAGMA user_version = ${owned}`);
    db.close();
    await migrated.expectEndpointsGivenToOperator(await openStore());
  });

  it('keeps endpoints that shared a URL before URLs were unique, and refuses new duplicates', async () => {
    const unique = sqliteMigrations.findIndex((sql) => sql.includes('duplicate_url'));
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    for (const sql of sqliteMigrations.slice(0, unique)) db.exec(sql);
    db.exec(`INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES
      ('ep_old', 'https://hooks.example.com/a', 'whsec_a', 1), ('ep_dup', 'https://hooks.example.com/a', 'whsec_b', 2);
      PRAGMA user_version = ${unique}`);
    db.close();

    const store = await openStore();
    await migrated.expectDuplicateUrlsKept(store);
    await store.close();
  });

  it('delivers an announcement written before traceparents were kept, without one', async () => {
    const traced = sqliteMigrations.findIndex((sql) => sql.includes('traceparent'));
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    for (const sql of sqliteMigrations.slice(0, traced)) db.exec(sql);
    db.exec(`INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES ('ep_before', 'https://hooks.example.com/a', 'whsec_a', 1);
      INSERT INTO webhook_events (plant_id, name, tag, created_at) VALUES (7, 'Announced', NULL, 2);
      PRAGMA user_version = ${traced}`);
    db.close();

    await migrated.expectOutboxKeptWithoutTraceparent(await openStore());
  });

  it('never issues again a webhook-id issued before seqs were AUTOINCREMENT, and keeps the ids of the deliveries kept', async () => {
    const autoincrement = sqliteMigrations.findIndex((sql) => sql.includes('AUTOINCREMENT'));
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    for (const sql of sqliteMigrations.slice(0, autoincrement)) db.exec(sql);
    // msg_00000000000000aa_2 was issued, then deleted: a plain rowid would issue seq 2 again.
    db.exec(`UPDATE webhook_settings SET instance = '00000000000000aa';
      INSERT INTO webhook_endpoints (id, url, secret, created_at) VALUES ('ep_old', 'https://hooks.example.com/a', 'whsec_a', 1);
      INSERT INTO webhook_deliveries (seq, endpoint_id, plant_id, name, status, attempts, created_at, finished_at) VALUES
        (1, 'ep_old', 1, 'Kept', 'failed', 1, 2, 2), (2, 'ep_old', 2, 'Pruned', 'delivered', 1, 2, 2);
      DELETE FROM webhook_deliveries WHERE seq = 2;
      PRAGMA user_version = ${autoincrement}`);
    db.close();

    const store = await openStore();
    expect((await store.webhooks.listDeliveries('ep_old', 10))?.map((delivery) => delivery.id)).toStrictEqual([
      'msg_00000000000000aa_1',
    ]);
    expect(await store.webhooks.retryDelivery('ep_old', 'msg_00000000000000aa_1')).toBe(true);
    await store.create({ id: 3n, name: 'New' });
    const claimed = await store.webhooks.claimDue({ limit: 10, leaseMs: 60_000, perEndpoint: 10, room: new Map() });
    const byPlant = new Map(claimed.map((delivery) => [delivery.plantId, delivery.id]));
    expect(byPlant.get(1n)).toBe('msg_00000000000000aa_1');
    expect(byPlant.get(3n)).toMatch(/^msg_[0-9a-f]{16}_\d+$/);
    expect(byPlant.get(3n)).not.toMatch(/^msg_00000000000000aa_/);
    // A retry by the new id reaches the new delivery, not the old one.
    expect(await store.webhooks.retryDelivery('ep_old', byPlant.get(3n) as string)).toBe(true);
    expect(await store.webhooks.retryDelivery('ep_old', 'msg_00000000000000aa_3')).toBe(false);
  });

  it('keeps every plant, event and delivery as JSON text when plants become text, exactly as the service writes it', async () => {
    const asText = sqliteMigrations.findIndex((sql) => sql.includes('plants_json'));
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    for (const sql of sqliteMigrations.slice(0, asText)) db.exec(sql);
    const big: StoredPlant = { id: 9223372036854775807n, name: 'Grüne "Minze" \\ 🌿', tag: 'été' };
    const plain: StoredPlant = { id: 9007199254740993n, name: 'Fern' };
    const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?)');
    for (const plant of [big, plain]) insert.run(plant.id, plant.name, plant.tag ?? null);
    db.exec(`INSERT INTO webhook_endpoints (id, url, secret, created_at, event_types, payload_format)
      VALUES ('ep_before', 'https://hooks.example.com/a', 'whsec_a', 1, 'newPlant,plantDeleted', 'plain')`);
    // An event not fanned out yet, and a deletion already fanned out to a delivery.
    db.prepare(
      `INSERT INTO webhook_events (type, plant_id, name, tag, created_at) VALUES ('newPlant', ?, ?, ?, 2)`,
    ).run(big.id, big.name, big.tag ?? null);
    db.prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, type, plant_id, name, tag, next_attempt_at, created_at)
       VALUES ('ep_before', 'plantDeleted', ?, ?, NULL, 3, 3)`,
    ).run(plain.id, plain.name);
    db.exec(`PRAGMA user_version = ${asText}`);
    db.close();

    const store = await openStore();
    expect(await store.list({ limit: 10 })).toStrictEqual([plain, big]);
    expect(await store.list({ limit: 10, tag: 'été' })).toStrictEqual([big]);
    // The text is plantJson's: a replay is a replay, a change a conflict.
    expect(await store.create({ ...big })).toStrictEqual({ outcome: 'replayed', plant: big });
    expect(await store.create({ ...plain, tag: 'new' })).toStrictEqual({ outcome: 'conflict', existing: plain });
    const claimed = await store.webhooks.claimDue({ limit: 10, leaseMs: 60_000, perEndpoint: 10, room: new Map() });
    expect(claimed.map(({ type, plantId, data }) => ({ type, plantId, data }))).toStrictEqual(
      expect.arrayContaining([
        {
          type: 'plantDeleted',
          plantId: plain.id,
          data: stringifyExactJson(WEBHOOK_EVENTS.plantDeleted.dataOf(plain)),
        },
        { type: 'newPlant', plantId: big.id, data: stringifyExactJson(WEBHOOK_EVENTS.newPlant.dataOf(big)) },
      ]),
    );
    expect(claimed).toHaveLength(2);
    expect(await store.get(big.id)).toStrictEqual(big);
  });

  it('holds a rate-limited endpoint to rate × t + one second’s worth by its clock, draining at the rate, and follows a change', async () => {
    const clock = manualClock();
    const store = await openStore({ clock });
    const rated = {
      id: 'ep_rated',
      url: 'https://hooks.example.com/rated',
      secret: 'whsec_a',
      owner: 'operator',
      rateLimit: 10,
    };
    await store.webhooks.createEndpoint(rated, { perOwner: 100, total: 10_000 });
    await store.webhooks.createEndpoint(
      { id: 'ep_free', url: 'https://hooks.example.com/free', secret: 'whsec_b', owner: 'operator' },
      { perOwner: 100, total: 10_000 },
    );
    await Promise.all(
      Array.from({ length: 100 }, (_, index) => store.create({ id: BigInt(index + 1), name: 'Rated' })),
    );
    const reported: number[] = [];
    const claim = async () => {
      const claimed = await store.webhooks.claimDue({
        limit: 200,
        leaseMs: 600_000,
        perEndpoint: 200,
        room: new Map(),
        onRateLimited: (roomInMs) => reported.push(roomInMs),
      });
      return {
        at: clock.now(),
        rated: claimed.filter((delivery) => delivery.endpointId === 'ep_rated').length,
        free: claimed.filter((delivery) => delivery.endpointId === 'ep_free').length,
      };
    };
    const claims: { at: number; rated: number; free: number }[] = [];
    for (let step = 0; step < 80; step++) {
      claims.push(await claim());
      await clock.advance(37);
    }
    // The endpoint without a limit: everything at once.
    expect(claims.map((claimed) => claimed.free).filter((count) => count > 0)).toStrictEqual([100]);
    // Over every span of claims, at most rate × t plus a burst of one second's worth (10).
    for (const [from, start] of claims.entries())
      for (const [to, end] of claims.entries()) {
        if (to < from) continue;
        const count = claims.slice(from, to + 1).reduce((sum, claimed) => sum + claimed.rated, 0);
        expect(count).toBeLessThanOrEqual(10 * ((end.at - start.at) / 1000) + 10);
      }
    // And no fewer: the backlog drains at the rate, and a claim held back said when to come back.
    const elapsed = (claims.at(-1) as { at: number }).at - (claims[0] as { at: number }).at;
    const drained = claims.reduce((sum, claimed) => sum + claimed.rated, 0);
    expect(drained).toBe(10 + Math.floor(elapsed / 100));
    expect(reported.length).toBeGreaterThan(0);
    for (const roomInMs of reported) expect(roomInMs).toBeLessThanOrEqual(100);

    // Lowered to 1 a second: what went out in the last second counts, so the next is a second away.
    await store.webhooks.updateEndpoint('ep_rated', { rateLimit: 1 });
    reported.length = 0;
    expect((await claim()).rated).toBe(0);
    expect(reported).toStrictEqual([1000]);
    await clock.advance(999);
    expect((await claim()).rated).toBe(0);
    await clock.advance(1);
    expect((await claim()).rated).toBe(1);
    // Removed: the rest at once.
    await store.webhooks.updateEndpoint('ep_rated', { rateLimit: null });
    expect((await claim()).rated).toBe(100 - drained - 1);
  });

  it('keeps a traced create’s traceparent with its announcement across a reopen', async () => {
    const traced = await SqlitePlantStore.open(dataDir, { tracing: migrated.fixedTracing });
    await migrated.expectTraceparentKept(traced, openStore);
  });

  it('refuses a database whose schema is newer than this build, and leaves it untouched', async () => {
    const db = new DatabaseSync(join(dataDir, SQLITE_FILE_NAME));
    db.exec('CREATE TABLE future (x INTEGER)');
    const future = sqliteMigrations.length + 10;
    db.exec(`PRAGMA user_version = ${future}`);
    db.close();

    await expect(openStore()).rejects.toThrow(
      `The database schema is at version ${future}, newer than this build knows (${sqliteMigrations.length}); run a newer release.`,
    );
    expect(userVersion(dataDir)).toBe(future);
    // The failed open released the file: another open sees the same refusal, not "in use".
    await expect(openStore()).rejects.toThrow(/newer than this build knows/);
  });

  it('rejects a create with StoreUnavailableError when the disk refuses the write, and keeps earlier plants', async () => {
    // Read-only files do not stop root, so the write is refused by a file-size limit (ulimit -f)
    // instead: SQLite then gets EFBIG from write(2), as it would from a full disk.
    const script = `
      process.on('SIGXFSZ', () => {});
      const { SqlitePlantStore } = await import(${JSON.stringify(STORE_MODULE)});
      const { StoreUnavailableError } = await import(${JSON.stringify(PLANT_STORE_MODULE)});
      const store = await SqlitePlantStore.open(process.argv[1]);
      const result = { acknowledged: [], failure: null };
      for (let id = 0; id < 800 && result.failure === null; id++) {
        try {
          await store.create({ id: BigInt(id), name: String(id).padEnd(190, '.'), tag: 't'.repeat(100) });
          result.acknowledged.push(id);
        } catch (error) {
          result.failure = {
            id,
            name: error.name,
            isStoreUnavailable: error instanceof StoreUnavailableError,
            stored: (await store.get(BigInt(id))) !== undefined,
          };
        }
      }
      await store.close();
      console.log(JSON.stringify(result));
    `;
    // 440 blocks of 512 bytes: room for the schema (webhook and request tables and their migrations included), not for 800 plants of ~300 bytes each.
    const child = await runNode(script, [dataDir], 'ulimit -f 440');
    expect(child, child.stderr).toMatchObject({ code: 0, signal: null });
    const { acknowledged, failure } = JSON.parse(child.stdout) as {
      acknowledged: number[];
      failure: { id: number; name: string; isStoreUnavailable: boolean; stored: boolean } | null;
    };
    expect(failure).toStrictEqual({
      id: acknowledged.length,
      name: 'StoreUnavailableError',
      isStoreUnavailable: true,
      stored: false,
    });
    expect(acknowledged.length).toBeGreaterThan(0);

    const store = await openStore();
    for (const id of acknowledged) expect(await store.get(BigInt(id))).toMatchObject({ id: BigInt(id) });
    expect(await store.get(BigInt(acknowledged.length))).toBeUndefined();
  }, 20_000);

  it('rejects pending and later creates with StoreUnavailableError after close, without touching the file', async () => {
    const store = await openStore();
    await store.create({ id: 1n, name: 'Monstera' });
    await store.close();
    await expect(store.create({ id: 2n, name: 'Fern' })).rejects.toBeInstanceOf(StoreUnavailableError);
    const reopened = await openStore();
    expect(await reopened.get(2n)).toBeUndefined();
    expect(await reopened.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera' });
  });

  describe('on its database thread', () => {
    it('commits the creates issued in one event-loop turn together, in one transaction', async () => {
      const store = await openStore();
      await store.create({ id: 0n, name: 'First' });
      const before = walCommits(dataDir);

      const outcomes = await Promise.all(plantsFrom(1, 100).map((plant) => store.create(plant)));
      expect(outcomes.map(({ outcome }) => outcome)).toStrictEqual(Array(100).fill('created'));
      expect(walCommits(dataDir) - before).toBe(1);
    });

    it('gathers the creates issued while a commit runs into the next commit', async () => {
      const store = await openStore();
      await store.create({ id: 0n, name: 'First' });
      const before = walCommits(dataDir);

      const first = store.create({ id: 1n, name: 'Alone' });
      // Immediates run in order, so the store has sent the first create before this one runs; the
      // thread's answer can only arrive in a later turn.
      await new Promise((resolve) => setImmediate(resolve));
      const later = plantsFrom(2, 50).map((plant) => store.create(plant));
      await Promise.all([first, ...later]);
      expect(walCommits(dataDir) - before).toBe(2);
    });

    it('fails every write of a batch the database refuses, still answers its reads, and commits the next batch', async () => {
      const store = await openStore();
      await store.create({ id: 1n, name: 'Monstera' });

      // node:sqlite refuses to bind an id beyond int64, so the batch's transaction fails.
      const [fern, outOfRange, read] = await Promise.allSettled([
        store.create({ id: 2n, name: 'Fern' }),
        store.create({ id: 2n ** 63n, name: 'Beyond int64' }),
        store.get(1n),
      ]);
      for (const refused of [fern, outOfRange]) {
        expect(refused).toMatchObject({ status: 'rejected', reason: expect.any(StoreUnavailableError) });
        expect((refused as PromiseRejectedResult).reason.message).toBe(
          'The embedded database could not commit the write.',
        );
      }
      expect(read).toStrictEqual({ status: 'fulfilled', value: { id: 1n, name: 'Monstera' } });
      expect(await store.get(2n)).toBeUndefined();
      expect(await store.create({ id: 2n, name: 'Fern' })).toMatchObject({ outcome: 'created' });
    });

    it('fails pending and later operations while its thread is down, then restarts it on the same database', async () => {
      const clock = manualClock();
      const store = await openStore({ clock });
      const events: string[] = [];
      store.onEvent(({ kind }) => events.push(kind));
      await store.create({ id: 1n, name: 'Monstera' });

      const pending = [store.create({ id: 2n, name: 'Fern' }), store.get(1n), store.health()];
      await store.terminateWorkerForTesting();
      for (const operation of pending) await expect(operation).rejects.toThrow(RESTARTING);
      await expect(store.create({ id: 3n, name: 'Aloe' })).rejects.toThrow(RESTARTING);
      // Lists refused meanwhile take no room in a batch after the restart.
      for (const list of [store.list({ limit: 1_000 }), store.list({ limit: 1_000 })]) {
        await expect(list).rejects.toThrow(RESTARTING);
      }
      await expect(store.health()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect([store.alive(), events]).toStrictEqual([false, ['stopped']]);

      await clock.advance(RESTART_DELAY_MS);
      await until(async () => store.alive(), Boolean);
      expect(events).toStrictEqual(['stopped', 'restarted']);
      // What was committed is there; the create cut off by the stop may or may not have committed.
      expect((await store.list({ limit: 10 })).slice(0, 1)).toStrictEqual([{ id: 1n, name: 'Monstera' }]);
      await store.health();
      expect((await store.create({ id: 2n, name: 'Fern' })).outcome).toMatch(/^(created|replayed)$/);
      expect(await store.create({ id: 3n, name: 'Aloe' })).toMatchObject({ outcome: 'created' });
      await store.close();
      await expect(store.health()).rejects.toThrow('The store is closed.');
    });

    it('gives up after MAX_RESTARTS stops in a row, and says so', async () => {
      const clock = manualClock();
      const store = await openStore({ clock });
      const events: string[] = [];
      store.onEvent(({ kind }) => events.push(kind));
      for (let stop = 0; stop < MAX_RESTARTS; stop += 1) {
        await store.terminateWorkerForTesting();
        await clock.advance(RESTART_DELAY_MS * 2 ** stop);
        await until(async () => store.alive(), Boolean);
      }
      await store.terminateWorkerForTesting();
      expect(events).toStrictEqual([
        ...Array(MAX_RESTARTS).fill(['stopped', 'restarted']).flat(),
        'stopped',
        'gave-up',
      ]);
      await clock.advance(60_000);
      expect(store.alive()).toBe(false);
      await expect(store.get(1n)).rejects.toThrow('The embedded database stopped and could not be restarted.');
    });

    it('serves a store attached over a channel again once given a channel to the restarted thread', async () => {
      const clock = manualClock();
      const store = await openStore({ clock });
      const attached = SqlitePlantStore.attach(store.channel());
      store.onEvent(({ kind }) => {
        if (kind === 'restarted') attached.reattach(store.channel());
      });
      await store.create({ id: 1n, name: 'Monstera' });
      await store.terminateWorkerForTesting();
      await until(
        async () => attached.alive(),
        (alive) => !alive,
      );
      await expect(attached.get(1n)).rejects.toThrow(RESTARTING);
      await clock.advance(RESTART_DELAY_MS);
      await until(async () => attached.alive(), Boolean);
      expect(await attached.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera' });
      await attached.close();
    });

    it('answers a flood of the largest lists in batches its thread holds, instead of running out of memory', async () => {
      const store = await openStore();
      const plant = { name: LARGEST_NAME, tag: LARGEST_TAG };
      await Promise.all(Array.from({ length: 1_000 }, (_, index) => store.create({ id: BigInt(index), ...plant })));
      // 1.2 MB each without a byte bound: a hundred at once took 120 MB in one batch.
      const lists = await Promise.all(Array.from({ length: 100 }, () => store.list({ limit: 1_000 })));
      expect(lists.map((list) => list.length)).toStrictEqual(Array(100).fill(1_000));
      expect(store.alive()).toBe(true);
    });

    it('answers a flood of lists of the largest endpoints in batches its thread holds', async () => {
      const store = await openStore();
      // URLs as stored: a four-byte character takes 12 once percent-encoded.
      const path = encodeURIComponent('🌿').repeat(WEBHOOK_URL_MAX_LENGTH - 30);
      for (let index = 0; index < WEBHOOK_ENDPOINTS_MAX; index += 1) {
        const endpoint = {
          id: `ep_${index}`,
          url: `https://e${index}.example/${path}`,
          description: LARGEST_DESCRIPTION,
        };
        await store.webhooks.createEndpoint(
          { ...endpoint, secret: 'whsec_x', owner: 'operator' },
          { perOwner: 100, total: 10_000 },
        );
      }
      const lists = await Promise.all(Array.from({ length: 60 }, () => store.webhooks.listEndpoints()));
      expect(lists.map((list) => list.length)).toStrictEqual(Array(60).fill(WEBHOOK_ENDPOINTS_MAX));
      expect(store.alive()).toBe(true);
    });

    it('serves a store attached over a channel (the delivery thread) from the same database, and closes it alone', async () => {
      const store = await openStore();
      const attached = SqlitePlantStore.attach(store.channel());
      await store.create({ id: 1n, name: 'Monstera' });
      expect(await attached.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera' });
      const writes = [attached.create({ id: 2n, name: 'Fern' }), attached.webhooks.backlog()];
      await attached.close();
      expect(await Promise.all(writes)).toMatchObject([{ outcome: 'created' }, { pending: 0 }]);
      await expect(attached.get(1n)).rejects.toThrow('The store is closed.');
      // The database stays open to the store that opened it.
      expect(await store.get(2n)).toStrictEqual({ id: 2n, name: 'Fern' });

      const other = SqlitePlantStore.attach(store.channel());
      await store.close();
      await expect(other.get(1n)).rejects.toBeInstanceOf(StoreUnavailableError);
    });

    it('finishes the writes issued before close, then refuses new ones', async () => {
      const store = await openStore();
      const creates = plantsFrom(1, 20).map((plant) => store.create(plant));
      const closed = store.close();
      await expect(store.create({ id: 21n, name: 'Too late' })).rejects.toThrow('The store is closed.');
      expect((await Promise.all(creates)).map(({ outcome }) => outcome)).toStrictEqual(Array(20).fill('created'));
      await closed;
      await store.close();

      const reopened = await openStore();
      expect(await reopened.list({ limit: 100 })).toStrictEqual(plantsFrom(1, 20));
    });

    it('lets the process exit while the store is idle, but not before a pending create is committed', async () => {
      const script = `
        const { SqlitePlantStore } = await import(${JSON.stringify(STORE_MODULE)});
        const store = await SqlitePlantStore.open(process.argv[1]);
        await store.create({ id: 1n, name: 'Monstera' });
        store.create({ id: 2n, name: 'Fern' }).then(({ outcome }) => console.log(outcome));
      `;
      const child = await runNode(script, [dataDir]);
      expect(child, child.stderr).toMatchObject({ code: 0, signal: null, stdout: 'created\n' });

      const store = await openStore();
      expect(await store.list({ limit: 10 })).toStrictEqual([
        { id: 1n, name: 'Monstera' },
        { id: 2n, name: 'Fern' },
      ]);
    });
  });
});
