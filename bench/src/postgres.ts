import { randomBytes } from 'node:crypto';
import { findPostgres, postgresMissingMessage, startPostgresServer } from '@org/plant-api/testing/postgres-server';
import pg from 'pg';
import { childPids, treeCpuSeconds } from './proc-cpu.ts';

export type Postgres = {
  /** Where (d) came from, for the report. */
  source: string;
  /** A new empty database; `drop` removes it. */
  createDatabase(): Promise<{ url: string; drop(): Promise<void> }>;
  /** Rows in the `plants` table of the database at `url`, or undefined when there is no such table. */
  countPlants(url: string): Promise<number | undefined>;
  /** Bytes on disk per stored plant (table, indexes, TOAST) of the database at `url`. */
  bytesPerPlant(url: string): Promise<number>;
  /** The server's WAL insert position in bytes: differences are the WAL written in between. */
  walPosition(): Promise<bigint>;
  /**
   * The next transaction id the server assigns: every transaction that writes takes one, so the
   * difference counts write transactions (one per create statement).
   */
  nextTransactionId(): Promise<bigint>;
  /**
   * CPU seconds every process of the server used so far (ended backends included), read from
   * /proc; undefined when the server is not this machine's throwaway one (BENCH_POSTGRES_URL).
   */
  cpuSeconds(): number | undefined;
  /** The server's processes now (postmaster first), or undefined when it is not ours. */
  processIds(): number[] | undefined;
  close(): Promise<void>;
};

const withClient = async <T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
};

const databaseUrl = (adminUrl: string, name: string): string => {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

const onServer = (
  adminUrl: string,
  source: string,
  close: () => Promise<void>,
  postmaster: () => number | undefined = () => undefined,
): Postgres => ({
  source,
  createDatabase: async () => {
    const name = `plant_bench_${randomBytes(6).toString('hex')}`;
    await withClient(adminUrl, (client) => client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`));
    return {
      url: databaseUrl(adminUrl, name),
      drop: async () => {
        await withClient(adminUrl, (client) =>
          client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
        );
      },
    };
  },
  countPlants: (url) =>
    withClient(url, async (client) => {
      const { rows } = await client.query<{ table: string | null }>("SELECT to_regclass('plants')::text AS table");
      if (!rows[0]?.table) return undefined;
      const counted = await client.query<{ count: string }>('SELECT count(*) FROM plants');
      return Number(counted.rows[0]?.count);
    }),
  bytesPerPlant: (url) =>
    withClient(url, async (client) => {
      const { rows } = await client.query<{ bytes: string | null }>(
        "SELECT pg_total_relation_size('plants') / nullif(count(*), 0) AS bytes FROM plants",
      );
      return Number(rows[0]?.bytes ?? Number.NaN);
    }),
  walPosition: () =>
    withClient(adminUrl, async (client) => {
      const { rows } = await client.query<{ bytes: string }>(
        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::int8::text AS bytes",
      );
      return BigInt(rows[0]?.bytes ?? 0);
    }),
  nextTransactionId: () =>
    withClient(adminUrl, async (client) => {
      const { rows } = await client.query<{ xid: string }>(
        'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid',
      );
      return BigInt(rows[0]?.xid ?? 0);
    }),
  cpuSeconds: () => {
    const pid = postmaster();
    return pid === undefined ? undefined : treeCpuSeconds(pid);
  },
  processIds: () => {
    const pid = postmaster();
    return pid === undefined ? undefined : [pid, ...childPids(pid)];
  },
  close,
});

/**
 * PostgreSQL for (d), or the reason it is skipped. The server is BENCH_POSTGRES_URL (an admin URL:
 * the benchmark creates and drops its own databases there) or a throwaway one started by the API's
 * test helper (its `./testing/postgres-server` export) from the installed PostgreSQL binaries, with
 * fsync on as in production.
 */
export const openPostgres = async (env: NodeJS.ProcessEnv): Promise<Postgres | string> => {
  if (env.BENCH_POSTGRES_URL) {
    return onServer(env.BENCH_POSTGRES_URL, 'BENCH_POSTGRES_URL', async () => {});
  }
  if (findPostgres() === undefined) return postgresMissingMessage().replace(/;.*$/, '');
  const server = await startPostgresServer({ fsync: true });
  return onServer(
    server.adminUrl,
    'a throwaway PostgreSQL (fsync on), same machine',
    () => server.destroy(),
    () => server.pid(),
  );
};
