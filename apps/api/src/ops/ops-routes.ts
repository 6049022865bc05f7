import express, { type Express, Router } from 'express';
import type { Logger } from 'pino';
import { errorHandler, notFound, otherMethods } from '../http/error-handler.ts';
import { sendError } from '../http/http-error.ts';
import { securityHeaders } from '../http/security-headers.ts';
import type { PlantStore } from '../store/plant-store.ts';
import type { Metrics } from './metrics.ts';
import { throttledRead } from './throttled-read.ts';

/** A readiness probe answers within this, even when the database does not. */
export const READINESS_TIMEOUT_MS = 2_000;

const STORE_DOWN = 'The plant store is down and restarting.';

/** Whether the store answers and is migrated: resolves, or rejects with the cause. */
export type Readiness = () => Promise<void>;

/**
 * The store's health, asked at most once a second whoever probes (see throttledRead): every probe
 * of a load balancer, an orchestrator and anyone on the open port would otherwise be a query each.
 * One per process, shared by every listener that answers /readyz.
 */
export const storeReadiness = (store: PlantStore, options?: Parameters<typeof throttledRead>[1]): Readiness =>
  throttledRead(() => store.health(), options);

export type OpsRoutesOptions = {
  readiness: Readiness;
  /**
   * False while the store is down until it is started again (PlantStore.alive): /healthz and
   * /readyz fail at once, whatever readiness said last. Always alive by default.
   */
  alive?: () => boolean;
  /** Answers GET /metrics when given; left out of the API's port when metrics have their own. */
  metrics?: Metrics;
  /** True from SIGTERM/SIGINT on: readiness fails. */
  isDraining: () => boolean;
  logger: Logger;
};

const withTimeout = <T>(promise: Promise<T>, ms: number, message: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};

/**
 * Operations endpoints, without authentication: GET /healthz (the process and its store are alive), GET /readyz
 * (it should get traffic: the store answered within the last second and is migrated, and it is not
 * shutting down) and GET /metrics (Prometheus). In production /metrics has a port of its own
 * (`createOpsApp`), which the ingress does not expose.
 */
export const opsRoutes = ({ readiness, alive = () => true, metrics, isDraining, logger }: OpsRoutesOptions): Router => {
  const router = Router();

  // A store that cannot serve until it is started again (the embedded store's thread, restarting or
  // given up) makes the process unhealthy: an orchestrator then restarts a process that stays so.
  router.get('/healthz', (_req, res) => {
    if (!alive()) return sendError(res, 503, STORE_DOWN, { 'Retry-After': '1' });
    res.json({ status: 'ok' });
  });

  router.get('/readyz', (_req, res) => {
    if (isDraining()) return sendError(res, 503, 'The service is shutting down.', { 'Retry-After': '1' });
    if (!alive()) return sendError(res, 503, STORE_DOWN, { 'Retry-After': '1' });
    withTimeout(readiness(), READINESS_TIMEOUT_MS, `The store did not answer within ${READINESS_TIMEOUT_MS} ms.`).then(
      () => res.json({ status: 'ready' }),
      (error: unknown) => {
        // The cause (hosts, schema versions) is for the operator's log, not for an unauthenticated caller.
        logger.warn({ err: error }, 'not ready');
        sendError(res, 503, 'The plant store is not ready; retry later.', { 'Retry-After': '1' });
      },
    );
  });

  if (metrics) router.get('/metrics', metrics.expose);

  router.all(metrics ? ['/healthz', '/readyz', '/metrics'] : ['/healthz', '/readyz'], otherMethods(['GET', 'HEAD']));
  return router;
};

/**
 * The listener of PLANT_METRICS_PORT: GET /metrics, and /healthz and /readyz too, so that probes can
 * target it, outside whatever admission control guards the API's port. Its requests are not counted
 * in the API's request metrics.
 */
export const createOpsApp = (options: Required<OpsRoutesOptions>): Express => {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(securityHeaders());
  app.use(opsRoutes(options));
  app.use(notFound);
  app.use(errorHandler(options.logger));
  return app;
};
