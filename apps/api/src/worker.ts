/**
 * The webhook worker's entry point (`node dist/worker.js`): delivers webhooks and nothing else,
 * beside API replicas started with PLANT_WEBHOOK_DELIVERY=false, on one PostgreSQL database. Several
 * share the work through their leases. No API routes: /healthz, /readyz and /metrics only, and the
 * drain on SIGTERM. A startup failure it knows ends the process with one line on stderr.
 */
import { ConfigError, loadConfig } from './config.ts';
import { StoreUnavailableError } from './store/plant-store.ts';
import { SchemaTooNewError } from './store/postgres-migrations.ts';

const startupErrors = [ConfigError, SchemaTooNewError, StoreUnavailableError];

try {
  const config = loadConfig(process.env, 'worker');
  // Before the modules it instruments load (see main.ts).
  const tracing = config.tracing
    ? await (await import('./ops/tracing.ts')).startTracing({ instrument: true })
    : undefined;
  const { startWorkerService } = await import('./worker-service.ts');
  await startWorkerService(config, tracing);
} catch (error) {
  if (!startupErrors.some((type) => error instanceof type)) throw error;
  console.error((error as Error).message);
  process.exit(1);
}
