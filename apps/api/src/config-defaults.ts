/**
 * Every default of the configuration, in the shape of `Config` (config.ts, whose schema applies
 * them; docs/configuration.md lists them). A module of its own, without zod, so that the threads
 * and modules that need a default (the delivery thread, the stores, the host resolver) read it here
 * without loading the schema.
 */
import { WEBHOOK_ROTATION_GRACE_DEFAULT_MS } from '@org/plant-contract';
import type { AdmissionLimits } from './http/admission.ts';
import type { ServerConfig } from './http/http-server.ts';

export const DAY_MS = 86_400_000;

export const CONFIG_DEFAULTS = {
  port: 3000,
  host: '127.0.0.1',
  dataDir: './data',
  logLevel: 'info',
  /** Log lines waiting for stdout, at most. */
  logBufferBytes: 4 * 1024 * 1024,
  rateLimitPerToken: 1000,
  authFailuresPerMinute: 60,
  metricsOnApiPort: false,
  jwt: {
    principalClaim: 'sub',
    algorithms: ['RS256', 'ES256', 'EdDSA'],
    clockToleranceMs: 30_000,
    jwksMaxStaleMs: 3_600_000,
  },
  database: { poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 5_000, deadlineMs: 5_000, migrate: true },
  server: {
    shutdownDrainMs: 3_000,
    shutdownGraceMs: 10_000,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
  } satisfies ServerConfig,
  /** Derived from measured costs: see docs/operations.md, Overload. */
  admission: {
    maxActive: 128,
    maxInFlight: 1_024,
    maxConnections: 10_000,
    maxEventLoopDelayMs: 500,
  } satisfies AdmissionLimits,
  /**
   * 63 of the largest pages at once. Such a page holds 2.2 times its bytes in the heap while
   * answered (scripts/answer-heap.ts), so 35 MiB at most, beside the 61 MiB that admission's bounds
   * let in (docs/operations.md, Overload), within `pnpm start`'s 160 MiB old space.
   */
  maxAnswerBytes: 16 * 1024 * 1024,
  webhooks: {
    timeoutMs: 15_000,
    /** The delays before each retry (then `failed`): about a day and a half in all. */
    retryDelaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
    allowPrivate: false,
    dnsTimeoutMs: 5_000,
    /** The contract documents it, and the client's fake applies it too. */
    rotationGraceMs: WEBHOOK_ROTATION_GRACE_DEFAULT_MS,
    /**
     * Endpoints of all principals together (each has the contract's WEBHOOK_ENDPOINTS_MAX): every
     * plant created writes a delivery for each endpoint subscribed.
     */
    endpointsMax: 1000,
    retentionMs: 30 * DAY_MS,
    disableAfterMs: 5 * DAY_MS,
    deliver: true,
    /**
     * The delivery thread's nice offset: on saturated cores it weighs about a tenth of the HTTP
     * thread (Linux's weights: 110 against 1024), and gets all it wants otherwise (decision 0013).
     */
    deliveryNice: 10,
  },
  otelSdkDisabled: false,
} as const;
