/**
 * The service's entry point. The embedded store's worker thread takes tens of milliseconds to start
 * (measured), so once the configuration is known to be good it starts first, and boots on the other
 * core while the rest of the service loads. Tracing, when the OTEL_ variables ask for it, starts
 * before both: the modules it instruments must load after it. A startup failure it knows ends the
 * process with one line on stderr.
 */
import { ConfigError, loadConfig } from './config.ts';
import { StoreUnavailableError } from './store/plant-store.ts';
import { SchemaTooNewError } from './store/postgres-migrations.ts';
import { DataDirInUseError, SqlitePlantStore } from './store/sqlite-store.ts';

const startupErrors = [ConfigError, DataDirInUseError, SchemaTooNewError, StoreUnavailableError];

try {
  const config = loadConfig(process.env);
  const tracing = config.tracing
    ? await (await import('./ops/tracing.ts')).startTracing({ instrument: true })
    : undefined;
  const sqlite = config.database ? undefined : SqlitePlantStore.open(config.dataDir, tracing);
  // Awaited, and its failure reported, by startService.
  sqlite?.catch(() => {});
  const { startService } = await import('./service.ts');
  await startService(config, sqlite, tracing);
} catch (error) {
  if (!startupErrors.some((type) => error instanceof type)) throw error;
  console.error((error as Error).message);
  process.exit(1);
}
