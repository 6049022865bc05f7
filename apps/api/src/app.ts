import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { contract } from '@org/plant-contract';
import { type Logger, pino } from 'pino';
import type { Authenticator } from './auth/authenticator.ts';
import { bearerAuth } from './auth/bearer-auth.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import { contractRoutes } from './http/contract-routes.ts';
import { docsRoutes } from './http/docs-routes.ts';
import { errorHandler, notFound } from './http/error-handler.ts';
import { answerGet } from './http/get-routes.ts';
import { readJsonBody } from './http/json-body.ts';
import { requestLogger } from './http/request-logger.ts';
import { createMetrics, type Metrics } from './ops/metrics.ts';
import { opsRoutes } from './ops/ops-routes.ts';
import { createPlantsRouter } from './plants/plants-router.ts';
import type { PlantStore } from './store/plant-store.ts';
import { createWebhooksRouter } from './webhooks/webhooks-router.ts';

export type AppOptions = {
  store: PlantStore;
  /** Decides whether a bearer token is accepted: staticTokens, jwtAuthenticator, or both combined. */
  authenticate: Authenticator;
  /** Requests per second per token (bursts of twice that); 0 for no limit. Default 1000. */
  rateLimitPerToken?: number;
  /** Failed authentications per minute per client address; 0 for no limit. Default 60. */
  authFailuresPerMinute?: number;
  /** Whether tokens must carry plants:read / plants:write scopes (JWT mode). */
  requireScopes?: boolean;
  logger?: Logger;
  /** Request body limit in bytes; defaults to BODY_LIMIT_BYTES. */
  bodyLimit?: number;
  /** Prometheus metrics served at /metrics; by default a fresh registry without process metrics. */
  metrics?: Metrics;
  /** True while shutting down: /readyz fails and connections close after their response. */
  isDraining?: () => boolean;
  /** PLANT_WEBHOOKS_ALLOW_PRIVATE: webhook URLs may be plain http and reach private addresses. */
  allowPrivateWebhooks?: boolean;
};

/**
 * Builds the Plant Store HTTP app, a request listener for node:http, without listening; the caller
 * owns the server and the store.
 */
export const createApp = ({
  store,
  authenticate,
  rateLimitPerToken = 1000,
  authFailuresPerMinute = 60,
  requireScopes = false,
  logger = pino({ enabled: false }),
  bodyLimit,
  metrics = createMetrics({ processMetrics: false }),
  isDraining = () => false,
  allowPrivateWebhooks = false,
}: AppOptions): RequestListener => {
  const ops = opsRoutes({ store, metrics, isDraining, logger });
  const docs = docsRoutes();
  const logRequest = requestLogger(logger);
  const answerError = errorHandler(logger);
  const handlers = {
    ...createPlantsRouter(metrics.instrumentStore(store)),
    ...createWebhooksRouter(store.webhooks, { allowPrivate: allowPrivateWebhooks }),
  };
  const plants = contractRoutes(contract, handlers, {
    authorize: bearerAuth({
      authenticate,
      requireScopes,
      ...(rateLimitPerToken > 0 && {
        perToken: new RateLimiter({ perSecond: rateLimitPerToken, burst: 2 * rateLimitPerToken }),
      }),
      ...(authFailuresPerMinute > 0 && {
        failuresPerAddress: new RateLimiter({ perSecond: authFailuresPerMinute / 60, burst: authFailuresPerMinute }),
      }),
    }),
    readBody: (req) => readJsonBody(req, bodyLimit),
  });

  const route = (req: IncomingMessage, res: ServerResponse): Promise<void> | undefined => {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const pathname = queryAt === -1 ? url : url.slice(0, queryAt);
    // A keep-alive client would otherwise keep its connection, and the drain would never end.
    if (isDraining()) res.setHeader('Connection', 'close');
    // Before the request log: probes every few seconds from every load balancer would drown it.
    const opsAnswer = answerGet(ops, req, res, pathname);
    if (opsAnswer) return opsAnswer;
    logRequest(req, res);
    return (
      plants(req, res, pathname, queryAt === -1 ? '' : url.slice(queryAt + 1)) ?? answerGet(docs, req, res, pathname)
    );
  };

  return (req, res) => {
    metrics.observeRequests(req, res);
    let answer: Promise<void> | undefined;
    try {
      answer = route(req, res);
    } catch (error) {
      answerError(error, req, res);
      return;
    }
    if (answer === undefined) notFound(res);
    else answer.catch((error: unknown) => answerError(error, req, res));
  };
};
