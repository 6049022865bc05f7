/**
 * The delivery process's entry point (`node dist/worker.js`, `pnpm worker`): delivers webhooks and
 * nothing else, beside API replicas started with PLANT_WEBHOOK_DELIVERY=false, on one PostgreSQL
 * database. Several share the work through their leases. No API routes: /healthz, /readyz and
 * /metrics only, and the drain on SIGTERM. A startup failure it knows ends the process with one
 * line on stderr.
 */
import { startProcess } from './process-lifecycle.ts';
import { StoreUnavailableError } from './store/plant-store.ts';
import { SchemaTooNewError } from './store/postgres/migrations.ts';

await startProcess('worker', [SchemaTooNewError, StoreUnavailableError], async (config, tracing) => {
  // Loaded once tracing started (see main.ts).
  const { startWorkerService } = await import('./worker-service.ts');
  await startWorkerService(config, tracing);
});
