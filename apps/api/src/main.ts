/**
 * The service's entry point. Opening the store takes tens of milliseconds (the embedded store's
 * worker thread boots; PostgreSQL connects and checks or migrates the schema), mostly outside this
 * thread, so once the configuration is known to be good the store starts opening first, while the
 * rest of the service loads. Tracing, when the OTEL_ variables ask for it, starts before both: the
 * modules it instruments must load after it. A startup failure it knows ends the process with one
 * line on stderr.
 */
import { ConfigError, loadConfig } from './config.ts';
import { openStore } from './store/open-store.ts';
import { StoreUnavailableError } from './store/plant-store.ts';
import { SchemaTooNewError } from './store/postgres-migrations.ts';
import { DataDirInUseError } from './store/sqlite-store.ts';

const startupErrors = [ConfigError, DataDirInUseError, SchemaTooNewError, StoreUnavailableError];

try {
  const config = loadConfig(process.env);
  const tracing = config.tracing
    ? await (await import('./ops/tracing.ts')).startTracing({ instrument: true })
    : undefined;
  const opening = openStore(config, tracing);
  // Awaited, and its failure reported, by startService.
  opening.store.catch(() => {});
  const { startService } = await import('./service.ts');
  await startService(config, opening, tracing);
} catch (error) {
  if (!startupErrors.some((type) => error instanceof type)) throw error;
  console.error((error as Error).message);
  process.exit(1);
}
