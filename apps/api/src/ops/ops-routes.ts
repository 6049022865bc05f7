import type { Logger } from 'pino';
import type { GetRoutes } from '../http/get-routes.ts';
import { sendError, sendJson } from '../http/http-error.ts';
import type { PlantStore } from '../store/plant-store.ts';
import type { Metrics } from './metrics.ts';

/** A readiness probe answers within this, even when the database does not. */
export const READINESS_TIMEOUT_MS = 2_000;

export type OpsRoutesOptions = {
  store: PlantStore;
  metrics: Metrics;
  /** True from SIGTERM/SIGINT on: readiness fails and connections close after their response. */
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
 * Operations endpoints, without authentication: GET /healthz (the process is alive), GET /readyz
 * (it should get traffic: the store answers and is migrated, and it is not shutting down) and GET
 * /metrics (Prometheus). Keep /metrics off the public internet at the ingress.
 */
export const opsRoutes = ({ store, metrics, isDraining, logger }: OpsRoutesOptions): GetRoutes =>
  new Map([
    ['/healthz', (_req, res) => sendJson(res, 200, '{"status":"ok"}')],
    [
      '/readyz',
      async (_req, res) => {
        if (isDraining()) return sendError(res, 503, 'The service is shutting down.', { 'Retry-After': '1' });
        try {
          await withTimeout(
            store.health(),
            READINESS_TIMEOUT_MS,
            `The store did not answer within ${READINESS_TIMEOUT_MS} ms.`,
          );
        } catch (error) {
          // The cause (hosts, schema versions) is for the operator's log, not for an unauthenticated caller.
          logger.warn({ err: error }, 'not ready');
          return sendError(res, 503, 'The plant store is not ready; retry later.', { 'Retry-After': '1' });
        }
        sendJson(res, 200, '{"status":"ready"}');
      },
    ],
    ['/metrics', metrics.expose],
  ]);
