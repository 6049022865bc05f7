import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createApp } from './app.ts';
import { resolveApiTokens } from './auth/api-tokens.ts';
import { type Authenticator, combineAuthenticators, staticTokens } from './auth/authenticator.ts';
import type { Config } from './config.ts';
import { admitRequests } from './http/admission.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { corsAnswerHeaders } from './http/cors.ts';
import { drainConnections } from './http/drain.ts';
import { createHttpServer, shutdownGracefully } from './http/http-server.ts';
import { sealKeptAnswers } from './http/idempotency-key.ts';
import { createProcessLogger } from './ops/log-output.ts';
import { createMetrics } from './ops/metrics.ts';
import { createOpsApp, storeReadiness } from './ops/ops-routes.ts';
import { closeServer, listenForOps, urlOf } from './ops/ops-server.ts';
import type { Tracing } from './ops/tracing-hooks.ts';
import { createShutdown, exitWhenStoreGivesUp, fail, failFatally } from './process-lifecycle.ts';
import type { OpeningStore } from './store/open-store.ts';
import type { PlantStore } from './store/plant-store.ts';
import type { PostgresPlantStore } from './store/postgres/postgres-store.ts';
import { SqlitePlantStore } from './store/sqlite/sqlite-store.ts';
import type { WebhookDelivery } from './webhooks/delivery/delivery-loop.ts';
import { startDeliveryThread } from './webhooks/delivery/delivery-thread-parent.ts';
import { createWebhookTester } from './webhooks/endpoints/webhook-tester.ts';
import { openWebhookSecrets } from './webhooks/secrets/seal-stored-secrets.ts';
import { createHostResolver } from './webhooks/targets/host-resolver.ts';

/** Linux caps it at net.core.somaxconn (4096 by default since 5.4). */
const LISTEN_BACKLOG = 4096;

/**
 * Delivery for a service with no webhook endpoint yet: the thread (and the memory and start-up time
 * of its V8 isolate, measured at 20-30 MiB and 150 ms) only once a create announced a plant, which
 * needs an endpoint. Nothing is due before: deliveries belong to endpoints, and every delivery
 * starts with an announcement. The thread claims what is due as it starts.
 */
const deliverOnceAnnounced = (
  store: PlantStore,
  startThread: () => Promise<WebhookDelivery>,
  logger: Logger,
): WebhookDelivery => {
  let started: Promise<WebhookDelivery> | undefined;
  const stopListening = store.webhooks.onAnnounce(() => {
    if (started) return;
    stopListening();
    logger.info('a plant was announced to a webhook endpoint: starting webhook delivery');
    started = startThread().catch((error: unknown) =>
      failFatally(logger, error, 'the webhook delivery thread did not start'),
    );
  });
  return {
    stop: async () => {
      stopListening();
      await (await started)?.stop();
    },
  };
};

/**
 * Takes the store that main.ts began to open, listens, and handles signals until shutdown. `tracing` is set when main.ts started it.
 */
export const startService = async (config: Config, opening: OpeningStore, tracing?: Tracing): Promise<void> => {
  const { logger, output: logOutput } = createProcessLogger(config);
  const shutdown = createShutdown(logger, tracing);
  opening.backgroundErrors.report = (error) => logger.warn({ err: error }, 'database connection lost while idle');
  const { database } = config;
  // Awaited only now, once the rest of the service loaded, and before any token file is written:
  // the data directory may turn out to be another process's.
  const store = await opening.store;
  if (store instanceof SqlitePlantStore) exitWhenStoreGivesUp(store, logger);
  let metrics: ReturnType<typeof createMetrics>;
  let storage: Record<string, string>;
  if (database) {
    // Loaded with pg by the store already: pg and jose load only when configured.
    const { describeDatabase } = await import('./store/postgres/postgres-store.ts');
    const postgres = store as PostgresPlantStore;
    metrics = createMetrics({ poolStats: () => postgres.poolStats(), droppedLogLines: logOutput.dropped });
    storage = { database: describeDatabase(database.url) };
  } else {
    metrics = createMetrics({ droppedLogLines: logOutput.dropped });
    storage = { dataDir: config.dataDir };
  }
  const { secrets, endpoints } = await openWebhookSecrets(store.webhooks, config.webhooks, logger, fail);
  const sealedAnswers = await sealKeptAnswers(store.requests, secrets);
  if (sealedAnswers > 0) logger.info({ sealed: sealedAnswers, keyId: secrets.keyId }, 'idempotency answers encrypted');
  // With only JWTs configured there is no static token to generate: the service is not open.
  const tokens =
    config.jwt && config.apiTokens.length === 0 ? undefined : resolveApiTokens(config.apiTokens, config.dataDir);
  const authenticators: { tokens?: Authenticator; jwt?: Authenticator } = {};
  if (tokens) authenticators.tokens = staticTokens(tokens.tokens);
  if (config.jwt) authenticators.jwt = (await import('./auth/jwt-authenticator.ts')).jwtAuthenticator(config.jwt);
  const webhookHostResolver = createHostResolver({ timeoutMs: config.webhooks.dnsTimeoutMs });
  // Its own agents: this process may not run the delivery thread (PLANT_WEBHOOK_DELIVERY=false).
  const webhookTester = createWebhookTester({
    timeoutMs: config.webhooks.timeoutMs,
    allowPrivate: config.webhooks.allowPrivate,
    resolver: webhookHostResolver,
    secrets,
  });
  // One for both listeners that answer /readyz.
  const readiness = storeReadiness(store);
  const app = createApp({
    store,
    readiness,
    authenticate: combineAuthenticators(authenticators),
    rateLimitPerToken: config.rateLimitPerToken,
    maxAnswerBytes: config.maxAnswerBytes,
    authFailuresPerMinute: config.authFailuresPerMinute,
    requireScopes: config.requireScopes,
    trustProxy: config.trustProxy,
    logger,
    metrics,
    serveMetrics: config.metricsOnApiPort,
    isDraining: shutdown.isStopping,
    allowPrivateWebhooks: config.webhooks.allowPrivate,
    webhookHostResolver,
    webhookTester,
    webhookSecrets: secrets,
    webhookRotationGraceMs: config.webhooks.rotationGraceMs,
    webhookEndpointsMax: config.webhooks.endpointsMax,
    ...(config.corsOrigins && { corsOrigins: config.corsOrigins }),
  });
  if (config.jwt && !config.requireScopes) {
    logger.warn('PLANT_API_JWT_REQUIRE_SCOPES=false: any valid JWT may call every route, including webhook management');
  }
  // Delivery runs in a thread of its own, which claims, signs, sends and records beside the HTTP
  // thread. API-only replicas (PLANT_WEBHOOK_DELIVERY=false) leave it to delivery processes (worker.ts).
  const startThread = () =>
    startDeliveryThread({
      store,
      config,
      logger,
      writeLog: (line) => logOutput.stream.write(line),
      metrics,
      onCrash: (error) =>
        failFatally(logger, error, 'the webhook delivery thread stopped', 'the webhook delivery thread failed'),
    });
  const webhooks: WebhookDelivery = !config.webhooks.deliver
    ? { stop: async () => {} }
    : endpoints > 0
      ? await startThread()
      : deliverOnceAnnounced(store, startThread, logger);
  if (!config.webhooks.deliver && database) {
    logger.info(
      'PLANT_WEBHOOK_DELIVERY=false: webhook worker processes (dist/worker.js) deliver what this replica announces',
    );
  } else if (!config.webhooks.deliver) {
    logger.warn(
      'PLANT_WEBHOOK_DELIVERY=false on the embedded store: no process delivers webhooks until it is true again',
    );
  }

  const server = createHttpServer(app, config.server);
  const admission = admitRequests(server, {
    ...config.admission,
    logger,
    onShed: metrics.countShed,
    ...(config.corsOrigins && { corsHeaders: corsAnswerHeaders(config.corsOrigins) }),
  });
  const connections = drainConnections(server);
  // Room for the connections that arrive while the event loop is busy (see the README, Overload).
  server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG });
  answerClientErrors(server);
  server.on('error', (error: NodeJS.ErrnoException) => {
    fail(`Cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}.`);
  });
  const opsServer =
    config.metrics &&
    listenForOps(
      config.metrics,
      createOpsApp({ readiness, alive: () => store.alive(), metrics, isDraining: shutdown.isStopping, logger }),
      logger,
      {
        message: 'metrics and probes listening',
        variable: 'PLANT_METRICS_PORT',
      },
    );
  server.on('listening', () => {
    const url = urlOf(config.host, (server.address() as AddressInfo).port);
    logger.info({ url, ...storage }, 'plant store listening');
    if (tokens?.generatedToken !== undefined) {
      console.log(
        [
          '',
          'No PLANT_API_TOKENS set, so an API token was generated. It is shown only this once;',
          `only its SHA-256 is kept, in ${tokens.hashFile}:`,
          '',
          `  ${tokens.generatedToken}`,
          '',
          'Try it:',
          '',
          `  curl -i -X POST ${url}/plants -H 'Authorization: Bearer ${tokens.generatedToken}' -H 'Content-Type: application/json' -d '{"id": 1, "name": "Monstera", "tag": "indoor"}'`,
          '',
        ].join('\n'),
      );
    } else if (tokens?.hashFile !== undefined) {
      logger.info(
        { hashFile: tokens.hashFile },
        'accepting the token generated on first start; set PLANT_API_TOKENS to choose tokens, or delete the file for a new one',
      );
    }
  });

  // A second signal during the drain window (Ctrl-C twice) stops listening at once.
  const hurry = new AbortController();
  shutdown.onSignals({
    again: () => hurry.abort(),
    stop: async (signal) => {
      // Connections held back have requests waiting unread: read them, to be answered with the drain's Connection: close.
      admission.readAll();
      const { shutdownDrainMs: drainMs, shutdownGraceMs: graceMs } = config.server;
      logger.info({ signal, drainMs, graceMs }, 'shutting down');
      const outcome = await shutdownGracefully(server, {
        drain: connections,
        drainMs,
        hurry: hurry.signal,
        graceMs,
        // Attempts in flight are recorded before the store closes. The ops listener answers probes
        // (readiness failing) until then.
        close: () => {
          admission.stop();
          // Tests still in flight are cut off: their requests are answered or abandoned by now.
          webhookTester.close();
          return Promise.all([webhooks.stop(), opsServer && closeServer(opsServer)]).then(() => store.close());
        },
      });
      if (outcome !== 'drained') fail('Shutdown grace period elapsed; exiting with requests still open.');
    },
  });
};
