import type { Config } from './config.ts';
import { createProcessLogger } from './ops/log-output.ts';
import { createMetrics } from './ops/metrics.ts';
import { createOpsApp, storeReadiness } from './ops/ops-routes.ts';
import { closeServer, listenForOps } from './ops/ops-server.ts';
import type { Tracing } from './ops/tracing-hooks.ts';
import { createShutdown, fail } from './process-lifecycle.ts';
import { describeDatabase, PostgresPlantStore } from './store/postgres/postgres-store.ts';
import { startWebhookDelivery } from './webhooks/delivery/delivery-loop.ts';
import { openWebhookSecrets } from './webhooks/secrets/seal-stored-secrets.ts';

/**
 * How often an idle worker process looks for due deliveries: the API replicas that announce them
 * are other processes, whose announcements it cannot hear. A claim that finds nothing is one short
 * query.
 */
export const WORKER_POLL_INTERVAL_MS = 250;

/**
 * Opens the PostgreSQL store (migrating it unless PLANT_DB_MIGRATE=false, as a replica does),
 * delivers, serves /healthz, /readyz and /metrics on PLANT_METRICS_PORT (or PORT), and on
 * SIGTERM/SIGINT lets the attempts in flight finish and be recorded before it exits. With `tracing`
 * (worker.ts started it), each attempt is a span in its create's trace.
 */
export const startWorkerService = async (config: Config, tracing?: Tracing): Promise<void> => {
  const { logger, output: logOutput } = createProcessLogger(config);
  const shutdown = createShutdown(logger, tracing);
  const database = config.database as NonNullable<Config['database']>;
  const store = await PostgresPlantStore.open({
    ...database,
    onBackgroundError: (error) => logger.warn({ err: error }, 'database connection lost while idle'),
  });
  const metrics = createMetrics({ poolStats: () => store.poolStats(), droppedLogLines: logOutput.dropped });
  const { secrets } = await openWebhookSecrets(store.webhooks, config.webhooks, logger, fail);
  const delivery = startWebhookDelivery({
    store,
    config: config.webhooks,
    logger,
    metrics,
    secrets,
    pollIntervalMs: WORKER_POLL_INTERVAL_MS,
    ...(tracing && { tracing }),
  });
  const address = config.metrics ?? { port: config.port, host: config.host };
  const ops = listenForOps(
    address,
    createOpsApp({
      readiness: storeReadiness(store),
      alive: () => store.alive(),
      metrics,
      isDraining: shutdown.isStopping,
      logger,
    }),
    logger,
    {
      message: 'webhook worker listening',
      variable: config.metrics ? 'PLANT_METRICS_PORT' : 'PORT',
    },
  );
  ops.once('listening', () => logger.info({ database: describeDatabase(database.url) }, 'delivering webhooks'));

  shutdown.onSignals({
    // A second signal during the drain ends the process at once; the leases of attempts cut off
    // run out and other workers take them over.
    again: () => fail('Stopped before the attempts in flight were recorded; they are retried once their leases end.'),
    stop: async (signal) => {
      logger.info({ signal }, 'shutting down');
      // Probes keep answering (readiness failing) until the attempts in flight are recorded.
      await delivery.stop();
      await closeServer(ops);
      await store.close();
    },
  });
};
