import { contract, exactJsonReplacer } from '@org/plant-contract';
import { createExpressEndpoints } from '@ts-rest/express';
import express, { type Express } from 'express';
import { type Logger, pino } from 'pino';
import type { Authenticator } from './auth/authenticator.ts';
import { bearerAuth } from './auth/bearer-auth.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import { CONFIG_DEFAULTS } from './config-defaults.ts';
import { answerBudget } from './http/answer-budget.ts';
import { type CorsOrigins, corsHeaders } from './http/cors.ts';
import { docsRoutes } from './http/docs-routes.ts';
import { errorHandler, notFound, otherMethods, validationErrorHandler } from './http/error-handler.ts';
import { requestLogger } from './http/request-logger.ts';
import { securityHeaders } from './http/security-headers.ts';
import type { TrustProxy } from './http/trust-proxy.ts';
import { createMetrics, type Metrics } from './ops/metrics.ts';
import { opsRoutes, type Readiness, storeReadiness } from './ops/ops-routes.ts';
import { createPlantsRouter, LARGEST_PAGE_BYTES } from './plants/plants-router.ts';
import type { PlantStore } from './store/plant-store.ts';
import { createWebhookTester, type WebhookTester } from './webhooks/endpoints/webhook-tester.ts';
import { createWebhooksRouter } from './webhooks/endpoints/webhooks-router.ts';
import type { SecretBox } from './webhooks/secrets/secret-box.ts';
import type { HostResolver } from './webhooks/targets/host-resolver.ts';
import { addressesOf } from './webhooks/targets/target-address.ts';

export type AppOptions = {
  store: PlantStore;
  /** Decides whether a bearer token is accepted: staticTokens, jwtAuthenticator, or both combined. */
  authenticate: Authenticator;
  /** Requests per second per token (bursts of twice that); 0 for no limit. Default 1000. */
  rateLimitPerToken?: number;
  /**
   * Failed authentications per minute per client address (`req.ip`) before its further failures get
   * 429; its valid tokens are still served. 0 for no limit. Default 60.
   */
  authFailuresPerMinute?: number;
  /**
   * Whether JWTs must carry the scope each contract route declares in its metadata; default true.
   * Named static tokens must either way; the operator's unnamed ones may do everything.
   */
  requireScopes?: boolean;
  /** Express's `trust proxy`: whose X-Forwarded-For names the client in `req.ip`. Default: no one. */
  trustProxy?: TrustProxy;
  logger?: Logger;
  /** Request body limit in bytes; defaults to BODY_LIMIT_BYTES. */
  bodyLimit?: number;
  /** PLANT_MAX_ANSWER_BYTES: bytes of lists being answered at once (see `answerBudget`). */
  maxAnswerBytes?: number;
  /** Prometheus metrics; by default a fresh registry without process metrics. */
  metrics?: Metrics;
  /**
   * Whether this app answers GET /metrics; by default not: its port is the public one, and metrics
   * have a listener of their own (PLANT_METRICS_PORT) unless PLANT_METRICS_ON_API_PORT says otherwise.
   */
  serveMetrics?: boolean;
  /**
   * What GET /readyz asks the store; by default `storeReadiness(store)`. A process with another
   * listener answering /readyz (PLANT_METRICS_PORT) gives both the same, so that the store sees one
   * query a second in all.
   */
  readiness?: Readiness;
  /**
   * True while shutting down: /readyz fails. Closing keep-alive connections is the server's part
   * (`drainConnections`), whatever app it serves.
   */
  isDraining?: () => boolean;
  /**
   * PLANT_CORS_ORIGINS: origins whose pages may call the API from a browser, or `*` for any. Default:
   * none, and no CORS headers at all.
   */
  corsOrigins?: CorsOrigins;
  /** PLANT_WEBHOOKS_ALLOW_PRIVATE: webhook URLs may be plain http and reach private addresses. */
  allowPrivateWebhooks?: boolean;
  /** Looks webhook hosts up when they are registered or changed (PLANT_WEBHOOK_DNS_TIMEOUT_MS). */
  webhookHostResolver?: HostResolver;
  /** Seals webhook signing secrets at rest (PLANT_WEBHOOK_SECRETS_KEY); plain text by default. */
  webhookSecrets?: SecretBox;
  /** PLANT_WEBHOOK_ROTATION_GRACE_MS. */
  webhookRotationGraceMs?: number;
  /** PLANT_WEBHOOK_ENDPOINTS_MAX: endpoints of all principals together. */
  webhookEndpointsMax?: number;
  /** Idempotency-Keys a principal may have kept at once; default IDEMPOTENCY_KEYS_PER_PRINCIPAL. */
  idempotencyKeysPerPrincipal?: number;
  /**
   * Sends the test deliveries of POST /webhooks/{id}/test, with agents of its own that its owner
   * closes (the service at shutdown). By default one with the default PLANT_WEBHOOK_TIMEOUT_MS,
   * the host resolver and secrets above, which nothing closes: its idle connections do not hold
   * the process.
   */
  webhookTester?: WebhookTester;
};

/** Methods per path of the contract, so that other methods get 405 (OPTIONS 204) with `Allow`. */
const methodsByPath = (): Map<string, string[]> => {
  const paths = new Map<string, string[]>();
  for (const route of Object.values(contract)) {
    // Express answers HEAD wherever it answers GET.
    const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    paths.set(route.path, [...(paths.get(route.path) ?? []), ...methods]);
  }
  return paths;
};

/**
 * Builds the Plant Store Express app without listening; the caller owns the server and the store.
 * Paths match case-insensitively, with or without a trailing slash (Express's defaults).
 */
export const createApp = ({
  store,
  authenticate,
  rateLimitPerToken = 1000,
  authFailuresPerMinute = 60,
  requireScopes = true,
  trustProxy = false,
  logger = pino({ enabled: false }),
  bodyLimit,
  maxAnswerBytes,
  metrics = createMetrics({ processMetrics: false }),
  serveMetrics = false,
  readiness = storeReadiness(store),
  isDraining = () => false,
  allowPrivateWebhooks = false,
  webhookHostResolver,
  webhookSecrets,
  webhookRotationGraceMs,
  webhookEndpointsMax,
  idempotencyKeysPerPrincipal,
  webhookTester = createWebhookTester({
    timeoutMs: CONFIG_DEFAULTS.webhooks.timeoutMs,
    allowPrivate: allowPrivateWebhooks,
    ...(webhookHostResolver && { resolver: webhookHostResolver }),
    ...(webhookSecrets && { secrets: webhookSecrets }),
  }),
  corsOrigins,
}: AppOptions): Express => {
  const app = express();
  app.disable('x-powered-by');
  // The API's answers are never cached (Cache-Control: no-store), so an ETag would be wasted work.
  app.disable('etag');
  // node:querystring: a repeated parameter arrives as an array, which the contract refuses.
  app.set('query parser', 'simple');
  // res.json writes bigint ids as exact JSON integers.
  app.set('json replacer', exactJsonReplacer);
  // req.ip: the client's address, read from X-Forwarded-For only as far as these proxies are trusted.
  // Every limit and log line keyed on the client uses it.
  app.set('trust proxy', trustProxy);

  app.use(metrics.observeRequests);
  app.use(securityHeaders());
  // Before authentication (preflights carry no token) and before anything that may answer an error.
  if (corsOrigins !== undefined && corsOrigins.length > 0) {
    app.use(corsHeaders(corsOrigins, [...new Set([...methodsByPath().values()].flat())]));
  }
  // Before the request log: probes every few seconds from every load balancer would drown it.
  app.use(opsRoutes({ readiness, alive: () => store.alive(), isDraining, logger, ...(serveMetrics && { metrics }) }));
  app.use(requestLogger(logger));

  const answers = answerBudget(maxAnswerBytes, LARGEST_PAGE_BYTES);
  const routes = {
    ...createPlantsRouter(metrics.instrumentStore(store), { bodyLimit, answers }),
    ...createWebhooksRouter(store.webhooks, {
      allowPrivate: allowPrivateWebhooks,
      ...(webhookHostResolver && { resolve: addressesOf(webhookHostResolver) }),
      answers,
      bodyLimit,
      secrets: webhookSecrets,
      rotationGraceMs: webhookRotationGraceMs,
      endpointsMax: webhookEndpointsMax,
      tester: webhookTester,
      requests: store.requests,
      idempotencyKeysPerPrincipal,
    }),
  };
  createExpressEndpoints(contract, routes, app, {
    logInitialization: false,
    // Authentication comes before any route's own middleware, so before a body is read.
    globalMiddleware: [
      bearerAuth({
        authenticate,
        requireScopes,
        ...(rateLimitPerToken > 0 && {
          perToken: new RateLimiter({ perSecond: rateLimitPerToken, burst: 2 * rateLimitPerToken }),
        }),
        ...(authFailuresPerMinute > 0 && {
          failuresPerAddress: new RateLimiter({ perSecond: authFailuresPerMinute / 60, burst: authFailuresPerMinute }),
        }),
      }),
    ],
    requestValidationErrorHandler: validationErrorHandler,
  });
  for (const [path, methods] of methodsByPath()) app.all(path, otherMethods(methods));

  app.use(docsRoutes());
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
};
