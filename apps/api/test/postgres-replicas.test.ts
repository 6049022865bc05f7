import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { type HttpAnswer, httpRequest, postPlant } from '#test/http-request';
import { killAllMains, MAIN_TEST_TOKEN, type RunningMain, runMain, startMain } from '#test/main-process';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';
import { runToEnd } from '#test/run-to-end';
import { postgresMigrations } from '../src/store/postgres/migrations.ts';

const MIGRATE = join(import.meta.dirname, '..', 'src', 'migrate.ts');
/** Every version this build knows. */
const ALL_VERSIONS = postgresMigrations.map((_, index) => index + 1);
const NEWEST = postgresMigrations.length;

const databases: TestDatabase[] = [];
const clients: pg.Client[] = [];

const database = async (): Promise<TestDatabase> => {
  const created = await freshDatabase('plant_replicas');
  databases.push(created);
  return created;
};

const query = async <R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> => {
  const client = new pg.Client({ connectionString: url });
  clients.push(client);
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
};

const appliedVersions = async (url: string): Promise<number[]> =>
  (await query<{ version: number }>(url, 'SELECT version FROM plant_schema_migrations ORDER BY version')).map(
    (row) => row.version,
  );

const replicaEnv = (url: string) => ({ DATABASE_URL: url, PLANT_API_TOKENS: MAIN_TEST_TOKEN });

const runMigrate = async (url: string): Promise<{ code: number | null; stdout: string; stderr: string }> => {
  const { code, stdout, stderr } = await runToEnd(process.execPath, [MIGRATE], {
    env: { PATH: process.env.PATH, DATABASE_URL: url },
    timeoutMs: 15_000,
  });
  return { code, stdout, stderr };
};

const cleanUp = async () => {
  await killAllMains();
  for (const client of clients.splice(0)) await client.end().catch(() => {});
  for (const created of databases.splice(0)) await created.drop();
};

describeWithPostgres('PostgreSQL: migrations', () => {
  afterEach(cleanUp);
  it('migrates alone with the migrate command, then finds nothing to do', async () => {
    const { url } = await database();
    expect(await runMigrate(url)).toStrictEqual({
      code: 0,
      stdout: `Applied migrations ${ALL_VERSIONS.join(', ')}; the schema is at version ${NEWEST}.\n`,
      stderr: '',
    });
    expect(await appliedVersions(url)).toStrictEqual(ALL_VERSIONS);
    expect(await runMigrate(url)).toMatchObject({
      code: 0,
      stdout: 'The schema is up to date; no migration to apply.\n',
    });

    await query(url, `INSERT INTO plant_schema_migrations (version) VALUES (${NEWEST + 1})`);
    expect(await runMigrate(url)).toStrictEqual({
      code: 1,
      stdout: '',
      stderr: `The database schema is at version ${NEWEST + 1}, newer than this build knows (${NEWEST}); run a newer release.\n`,
    });
  }, 30_000);

  it('with PLANT_DB_MIGRATE=false, refuses to start on an unmigrated database and starts once migrated', async () => {
    const { url } = await database();
    const refused = runMain({ ...replicaEnv(url), PLANT_DB_MIGRATE: 'false' });
    expect(await refused.exited()).toStrictEqual({ code: 1, signal: null });
    expect(refused.stderr()).toBe(
      `The database schema is at version 0, older than this build needs (${NEWEST}); run the migrations (pnpm --filter @org/plant-api migrate).\n`,
    );
    expect((await runMigrate(url)).code).toBe(0);
    const started = await startMain({ ...replicaEnv(url), PLANT_DB_MIGRATE: 'false' });
    expect((await httpRequest(`${started.url}/readyz`)).status).toBe(200);
  }, 30_000);

  it('exits 1 with one line, and no password, when the database cannot be reached at start', async () => {
    const server = runMain({
      DATABASE_URL: 'postgres://plants:hunter2-secret@127.0.0.1:1/plants',
      PLANT_API_TOKENS: MAIN_TEST_TOKEN,
    });
    expect(await server.exited()).toStrictEqual({ code: 1, signal: null });
    expect(server.stderr()).toMatch(/^Cannot connect to PostgreSQL at 127\.0\.0\.1:1\/plants: .*ECONNREFUSED.*\n$/);
    expect(server.stderr() + server.stdout()).not.toContain('hunter2');
  }, 20_000);
});

describeWithPostgres('PostgreSQL: three replicas on one database', () => {
  let url = '';
  let replicas: RunningMain[] = [];

  // Started together on a fresh database, and shared by the tests below.
  beforeAll(async () => {
    url = (await database()).url;
    replicas = await Promise.all([1, 2, 3].map(() => startMain(replicaEnv(url))));
  }, 40_000);
  afterAll(cleanUp);

  it('migrated exactly once, and serves one set of plants from every replica', async () => {
    expect(await appliedVersions(url)).toStrictEqual(ALL_VERSIONS);
    const [a, b, c] = replicas as [RunningMain, RunningMain, RunningMain];
    for (const replica of replicas) {
      expect((await httpRequest(`${replica.url}/readyz`)).status).toBe(200);
      expect((await httpRequest(`${replica.url}/healthz`)).status).toBe(200);
    }

    const big = 2n ** 63n - 1n;
    const created = await postPlant(a.url, MAIN_TEST_TOKEN, { id: big, name: 'Largest', tag: 'edge' });
    expect([created.status, created.json()]).toStrictEqual([200, { name: 'Largest', tag: 'edge' }]);
    const replayed = await postPlant(b.url, MAIN_TEST_TOKEN, { id: big, name: 'Largest', tag: 'edge' });
    expect([replayed.status, replayed.json()]).toStrictEqual([200, { name: 'Largest', tag: 'edge' }]);
    const conflict = await postPlant(c.url, MAIN_TEST_TOKEN, { id: big, name: 'Other' });
    expect(conflict.status).toBe(409);
    const read = await httpRequest(`${c.url}/plants/${big}`, {
      headers: { authorization: `Bearer ${MAIN_TEST_TOKEN}` },
    });
    expect(read.status).toBe(200);
    expect(read.text).toContain(`"id":${big}`);
  }, 20_000);

  it('answers concurrent creates of one id across replicas with one row, and 200 or 409 matching it', async () => {
    const variants = [{ name: 'Pothos' }, { name: 'Pothos', tag: 'golden' }, { name: 'Philodendron' }];
    const ids = Array.from({ length: 40 }, (_, index) => 2n ** 53n + BigInt(index));

    const attempts = ids.flatMap((id) =>
      Array.from({ length: 9 }, (_, index) => ({
        replica: replicas[index % replicas.length] as RunningMain,
        plant: { id, ...(variants[(index + Number(id % 3n)) % variants.length] as { name: string; tag?: string }) },
      })),
    );
    // All at once: every id is raced by every replica, each with several versions of the plant.
    const answers: HttpAnswer[] = await Promise.all(
      attempts.map(({ replica, plant }) => postPlant(replica.url, MAIN_TEST_TOKEN, plant)),
    );

    const rows = await query<{ id: string; name: string; tag: string | null }>(
      url,
      "SELECT id::text, plant::json ->> 'name' AS name, tag FROM plants WHERE id BETWEEN $1 AND $2 ORDER BY id",
      [String(ids[0]), String(ids.at(-1))],
    );
    expect(rows.map((row) => BigInt(row.id))).toStrictEqual(ids);
    const stored = new Map(rows.map((row) => [BigInt(row.id), row]));
    for (const [index, answer] of answers.entries()) {
      const { plant } = attempts[index] as (typeof attempts)[number];
      const row = stored.get(plant.id);
      const same = row?.name === plant.name && (row?.tag ?? undefined) === plant.tag;
      if (same) {
        expect([answer.status, answer.json()]).toStrictEqual([
          200,
          plant.tag ? { name: plant.name, tag: plant.tag } : { name: plant.name },
        ]);
      } else {
        expect(answer.status, answer.text).toBe(409);
      }
    }
    const statuses = new Set(answers.map((answer) => answer.status));
    expect([...statuses].sort()).toStrictEqual([200, 409]);
  }, 40_000);
});
