/**
 * The service's entry point. The embedded store's worker thread takes tens of milliseconds to start
 * (measured), so once the configuration is known to be good it starts first, and boots on the other
 * core while the rest of the service loads. A startup failure it knows ends the process with one
 * line on stderr.
 */
import { ConfigError, loadConfig } from './config.ts';
import { StoreUnavailableError } from './store/plant-store.ts';
import { SchemaTooNewError } from './store/postgres-migrations.ts';
import { DataDirInUseError, SqlitePlantStore } from './store/sqlite-store.ts';

const startupErrors = [ConfigError, DataDirInUseError, SchemaTooNewError, StoreUnavailableError];

try {
  const config = loadConfig(process.env);
  const sqlite = config.database ? undefined : SqlitePlantStore.open(config.dataDir);
  // Awaited, and its failure reported, by startService.
  sqlite?.catch(() => {});
  const { startService } = await import('./service.ts');
  await startService(config, sqlite);
} catch (error) {
  if (!startupErrors.some((type) => error instanceof type)) throw error;
  console.error((error as Error).message);
  process.exit(1);
}
