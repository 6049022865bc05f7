import { contract, exactJsonReplacer } from '@org/plant-contract';
import { createExpressEndpoints, type RequestValidationError } from '@ts-rest/express';
import express, { type Express } from 'express';
import { type Logger, pino } from 'pino';
import type { Authenticator } from './auth/authenticator.ts';
import { bearerAuth } from './auth/bearer-auth.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import { docsRoutes } from './http/docs-routes.ts';
import { errorHandler, notFound, otherMethods } from './http/error-handler.ts';
import { sendError } from './http/http-error.ts';
import { requestLogger } from './http/request-logger.ts';
import { securityHeaders } from './http/security-headers.ts';
import { validationMessage } from './http/validation-message.ts';
import { createMetrics, type Metrics } from './ops/metrics.ts';
import { opsRoutes } from './ops/ops-routes.ts';
import { createPlantsRouter } from './plants/plants-router.ts';
import type { PlantStore } from './store/plant-store.ts';

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
};

const describeValidationError = (error: RequestValidationError): string => {
  if (error.pathParams) return validationMessage('path parameters', error.pathParams);
  if (error.query) return validationMessage('query parameters', error.query);
  if (error.headers) return validationMessage('headers', error.headers);
  return error.body ? validationMessage('request body', error.body) : 'Invalid request.';
};

/** Methods per path, from the contract, so other methods get 405 (OPTIONS 204) with `Allow`. */
const methodsByPath = (): Map<string, string[]> => {
  const paths = new Map<string, string[]>();
  for (const route of Object.values(contract)) {
    // Express answers HEAD wherever it answers GET.
    const methods = route.method === 'GET' ? ['GET', 'HEAD'] : [route.method];
    paths.set(route.path, [...(paths.get(route.path) ?? []), ...methods]);
  }
  return paths;
};

/** Builds the Plant Store HTTP app without listening; the caller owns the server and the store. */
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
}: AppOptions): Express => {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.set('json replacer', exactJsonReplacer);
  app.use(metrics.observeRequests);
  app.use(securityHeaders);
  // Before the request log: probes every few seconds from every load balancer would drown it.
  app.use(opsRoutes({ store, metrics, isDraining, logger }));
  app.use(requestLogger(logger));

  createExpressEndpoints(contract, createPlantsRouter(metrics.instrumentStore(store), bodyLimit), app, {
    logInitialization: false,
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
    requestValidationErrorHandler: (error, _req, res) => sendError(res, 400, describeValidationError(error)),
  });
  for (const [path, methods] of methodsByPath()) app.all(path, otherMethods(methods));

  app.use(docsRoutes());
  app.use(notFound);
  app.use(errorHandler(logger));
  return app;
};
