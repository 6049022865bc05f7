/**
 * The service's entry point. Opening the store takes tens of milliseconds (the embedded store's
 * SQLite thread boots; PostgreSQL connects and checks or migrates the schema), mostly outside this
 * thread, so once the configuration is known to be good the store starts opening first, while the
 * rest of the service loads. Tracing, when the OTEL_ variables ask for it, starts before both
 * (startProcess): the modules it instruments must load after it. A startup failure it knows ends
 * the process with one line on stderr.
 */
import { startProcess } from './process-lifecycle.ts';
import { openStore } from './store/open-store.ts';
import { StoreUnavailableError } from './store/plant-store.ts';
import { SchemaTooNewError } from './store/postgres/migrations.ts';
import { DataDirInUseError } from './store/sqlite/database-thread.ts';

await startProcess('api', [DataDirInUseError, SchemaTooNewError, StoreUnavailableError], async (config, tracing) => {
  const opening = openStore(config, tracing);
  // Awaited, and its failure reported, by startService.
  opening.store.catch(() => {});
  const { startService } = await import('./service.ts');
  await startService(config, opening, tracing);
});
