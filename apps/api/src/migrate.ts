import pg from 'pg';
import { ConfigError, loadDatabaseConfig } from './config.ts';
import { migrate, SchemaTooNewError } from './store/postgres/migrations.ts';
import { describeDatabase } from './store/postgres/postgres-store.ts';

class CannotConnectError extends Error {
  override readonly name = 'CannotConnectError';
}

/**
 * Applies pending PostgreSQL migrations and exits: `DATABASE_URL=… pnpm --filter @org/plant-api migrate`.
 * Safe to run while replicas start or serve: it takes the same advisory lock they do.
 */
const run = async (): Promise<string> => {
  const { url, connectTimeoutMs } = loadDatabaseConfig(process.env);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
  try {
    await client.connect();
  } catch (error) {
    throw new CannotConnectError(
      `Cannot connect to PostgreSQL at ${describeDatabase(url)}: ${(error as Error).message}`,
    );
  }
  try {
    const applied = await migrate(client);
    return applied.length === 0
      ? 'The schema is up to date; no migration to apply.'
      : `Applied migration${applied.length === 1 ? '' : 's'} ${applied.join(', ')}; the schema is at version ${applied.at(-1)}.`;
  } finally {
    await client.end().catch(() => {});
  }
};

try {
  console.log(await run());
} catch (error) {
  if (![ConfigError, CannotConnectError, SchemaTooNewError].some((type) => error instanceof type)) throw error;
  console.error((error as Error).message);
  process.exitCode = 1;
}
