import { z } from 'zod';
import { type ApiTokenEntry, conflictingEntries, parseTokenEntry, TOKEN_ENTRIES_SYNTAX } from './auth/token-entries.ts';
import { DAY_MS, CONFIG_DEFAULTS as DEFAULTS } from './config-defaults.ts';
import type { AdmissionLimits } from './http/admission.ts';
import type { CorsOrigins } from './http/cors.ts';
import type { ServerConfig } from './http/http-server.ts';
import { parseTrustProxy, type TrustProxy } from './http/trust-proxy.ts';
import { SECRETS_KEY_BYTES } from './webhooks/secrets/secret-box.ts';

const rate = (fallback: number) =>
  optional(
    z
      .string()
      .regex(/^\d+(\.\d+)?$/, 'must be a non-negative number (0 turns the limit off)')
      .transform(Number)
      .default(String(fallback)),
  );

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

// An empty variable counts as unset, as in most shells' `VAR= command`.
const optional = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema);

/** A whole number from `min` to `max`, e.g. a duration in milliseconds or a pool size. */
const wholeNumber = (fallback: number, min: number, max: number, unit = '') => {
  const message = `must be a whole number${unit} from ${min} to ${max}`;
  return optional(
    z
      .string()
      .regex(/^\d{1,10}$/, message)
      .transform(Number)
      .refine((value) => value >= min && value <= max, message)
      .default(String(fallback)),
  );
};
const milliseconds = (fallback: number, min = 1, max = 3_600_000) =>
  wholeNumber(fallback, min, max, ' of milliseconds');

/** A duration of days or more in milliseconds, up to `maxDays`. */
const longMilliseconds = (fallback: number, maxDays: number) => {
  const message = `must be a whole number of milliseconds from 1 to ${maxDays * DAY_MS} (${maxDays} days)`;
  return optional(
    z
      .string()
      .regex(/^\d{1,13}$/, message)
      .transform(Number)
      .refine((value) => value >= 1 && value <= maxDays * DAY_MS, message)
      .default(String(fallback)),
  );
};

const MAX_RETRY_DELAY_MS = 7 * 24 * 3_600_000;
const MAX_RETRIES = 20;
const RETRY_DELAYS_MESSAGE = `must be a comma-separated list of 1 to ${MAX_RETRIES} whole numbers of milliseconds, each at most ${MAX_RETRY_DELAY_MS}`;

const MAX_ROTATION_GRACE_MS = 30 * 24 * 3_600_000;
const SECRETS_KEY_MESSAGE = `must be ${SECRETS_KEY_BYTES} random bytes in base64 (openssl rand -base64 ${SECRETS_KEY_BYTES})`;

/** The one syntax of a boolean variable: `true` or `false`. */
const booleanText = z
  .enum(['true', 'false'], { errorMap: () => ({ message: 'must be true or false' }) })
  .transform((text) => text === 'true');
const booleanFlag = (fallback: boolean) => optional(booleanText.default(String(fallback) as 'true' | 'false'));
/** A boolean whose default depends on other variables: unset stays undefined. */
const optionalBoolean = optional(booleanText.optional());

const port = z
  .string()
  .regex(/^\d{1,5}$/, 'must be a port number from 0 to 65535')
  .transform(Number)
  .refine((value) => value <= 65535, 'must be a port number from 0 to 65535');

/** Identity providers on this machine (development, tests) may serve their keys over plain http. */
const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);

const TRUST_PROXY_MESSAGE =
  'must be a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal (true is refused: every client could choose its own address)';

const CORS_ORIGINS_MESSAGE =
  'must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash)';

/** An origin exactly as a browser sends it in `Origin`: the URL's own serialization, nothing more. */
const isOrigin = (text: string): boolean =>
  URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol) && new URL(text).origin === text;

/** The OTLP endpoint variables: where the SDK sends spans. */
const otlpEndpoint = optional(
  z
    .string()
    .refine(
      (text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol),
      'must be an http or https URL (the OTLP collector, e.g. http://localhost:4318)',
    )
    .optional(),
);
const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;
const otlpProtocol = optional(
  z.enum(OTLP_PROTOCOLS, { errorMap: () => ({ message: `must be one of ${OTLP_PROTOCOLS.join(', ')}` }) }).optional(),
);
const TRACES_EXPORTERS = ['otlp', 'console', 'zipkin', 'none'];

/** The environment the service reads: every variable, its rule and its default (docs/configuration.md). */
export const Env = z.object({
  PORT: optional(port.default(String(DEFAULTS.port))),
  HOST: optional(z.string().default(DEFAULTS.host)),
  PLANT_TRUST_PROXY: optional(
    z
      .string()
      .transform((value, context) => {
        const trust = parseTrustProxy(value.trim());
        if (trust === undefined) context.addIssue({ code: z.ZodIssueCode.custom, message: TRUST_PROXY_MESSAGE });
        return trust ?? z.NEVER;
      })
      .optional(),
  ),
  PLANT_CORS_ORIGINS: optional(
    z
      .string()
      .transform((list) => list.split(',').map((origin) => origin.trim()))
      .refine(
        (origins) => (origins.length === 1 && origins[0] === '*') || origins.every(isOrigin),
        CORS_ORIGINS_MESSAGE,
      )
      .transform((origins): CorsOrigins => (origins[0] === '*' ? '*' : origins))
      .optional(),
  ),
  PLANT_METRICS_PORT: optional(port.optional()),
  PLANT_METRICS_HOST: optional(z.string().optional()),
  PLANT_METRICS_ON_API_PORT: booleanFlag(DEFAULTS.metricsOnApiPort),
  PLANT_API_TOKENS: optional(
    z
      .string()
      .transform((list, context) => {
        const entries = list
          .split(',')
          .map((entry) => entry.trim())
          .filter((entry) => entry !== '')
          .map(parseTokenEntry);
        if (!entries.every((entry) => entry !== undefined)) {
          context.addIssue({ code: 'custom', message: TOKEN_ENTRIES_SYNTAX });
          return z.NEVER;
        }
        const conflict = conflictingEntries(entries);
        if (conflict !== undefined) {
          context.addIssue({ code: 'custom', message: conflict });
          return z.NEVER;
        }
        return entries;
      })
      .optional(),
  ),
  PLANT_DATA_DIR: optional(z.string().default(DEFAULTS.dataDir)),
  PLANT_RATE_LIMIT_PER_TOKEN: rate(DEFAULTS.rateLimitPerToken),
  PLANT_AUTH_FAILURES_PER_MINUTE: rate(DEFAULTS.authFailuresPerMinute),
  PLANT_API_JWKS_URL: optional(
    z
      .string()
      .url('must be an https URL')
      // zod runs this after a failed .url() too: an unparsable URL must not throw here.
      .refine((text) => {
        const url = URL.parse(text);
        return url?.protocol === 'https:' || (url?.protocol === 'http:' && isLoopbackHost(url.hostname));
      }, 'must be an https URL (plain http only to a loopback host: localhost, 127.0.0.0/8, ::1)')
      .optional(),
  ),
  PLANT_API_JWT_ISSUER: optional(z.string().optional()),
  PLANT_API_JWT_AUDIENCE: optional(z.string().optional()),
  PLANT_API_JWT_ALGORITHMS: optional(
    z
      .string()
      .transform((list) => list.split(',').map((name) => name.trim()))
      .refine(
        (names) => names.length > 0 && names.every((name) => ALGORITHMS.includes(name)),
        `must be a comma-separated list of ${ALGORITHMS.join(', ')} (never none or a shared-secret HS algorithm)`,
      )
      .default(DEFAULTS.jwt.algorithms.join(',')),
  ),
  PLANT_API_JWT_CLOCK_TOLERANCE_MS: milliseconds(DEFAULTS.jwt.clockToleranceMs, 0, 600_000),
  PLANT_API_JWKS_MAX_STALE_MS: longMilliseconds(DEFAULTS.jwt.jwksMaxStaleMs, 7),
  // Unset: true with a JWKS, false without (loadConfig).
  PLANT_API_JWT_REQUIRE_SCOPES: optionalBoolean,
  PLANT_API_JWT_PRINCIPAL_CLAIM: optional(
    z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be a claim name: 1 to 64 characters of A-Z a-z 0-9 _ . : -')
      .default(DEFAULTS.jwt.principalClaim),
  ),
  DATABASE_URL: optional(
    z
      .string()
      // Never echoed back: the URL may carry a password.
      .refine(
        (url) => /^postgres(ql)?:\/\//i.test(url) && URL.canParse(url),
        'must be a postgres:// or postgresql:// URL',
      )
      .optional(),
  ),
  PLANT_DB_POOL_SIZE: wholeNumber(DEFAULTS.database.poolSize, 1, 1000),
  PLANT_DB_CONNECT_TIMEOUT_MS: milliseconds(DEFAULTS.database.connectTimeoutMs),
  PLANT_DB_STATEMENT_TIMEOUT_MS: milliseconds(DEFAULTS.database.statementTimeoutMs),
  PLANT_DB_DEADLINE_MS: milliseconds(DEFAULTS.database.deadlineMs),
  PLANT_DB_MIGRATE: booleanFlag(DEFAULTS.database.migrate),
  PLANT_SHUTDOWN_DRAIN_MS: milliseconds(DEFAULTS.server.shutdownDrainMs, 0),
  PLANT_SHUTDOWN_GRACE_MS: milliseconds(DEFAULTS.server.shutdownGraceMs, 0),
  PLANT_HTTP_HEADERS_TIMEOUT_MS: milliseconds(DEFAULTS.server.headersTimeoutMs),
  PLANT_HTTP_REQUEST_TIMEOUT_MS: milliseconds(DEFAULTS.server.requestTimeoutMs),
  PLANT_HTTP_KEEP_ALIVE_TIMEOUT_MS: milliseconds(DEFAULTS.server.keepAliveTimeoutMs),
  PLANT_MAX_ACTIVE: wholeNumber(DEFAULTS.admission.maxActive, 0, 1_000_000),
  PLANT_MAX_IN_FLIGHT: wholeNumber(DEFAULTS.admission.maxInFlight, 1, 1_000_000),
  PLANT_MAX_CONNECTIONS: wholeNumber(DEFAULTS.admission.maxConnections, 1, 1_000_000),
  PLANT_MAX_EVENT_LOOP_DELAY_MS: milliseconds(DEFAULTS.admission.maxEventLoopDelayMs, 0, 60_000),
  PLANT_MAX_ANSWER_BYTES: wholeNumber(DEFAULTS.maxAnswerBytes, 1, 2 ** 33, ' of bytes'),
  PLANT_WEBHOOK_TIMEOUT_MS: milliseconds(DEFAULTS.webhooks.timeoutMs, 1, 600_000),
  PLANT_WEBHOOK_RETRY_DELAYS_MS: optional(
    z
      .string()
      .transform((list) => list.split(',').map((delay) => delay.trim()))
      .refine(
        (delays) =>
          delays.length <= MAX_RETRIES &&
          delays.every((delay) => /^\d{1,10}$/.test(delay) && Number(delay) <= MAX_RETRY_DELAY_MS),
        RETRY_DELAYS_MESSAGE,
      )
      .transform((delays) => delays.map(Number))
      .default(DEFAULTS.webhooks.retryDelaysMs.join(',')),
  ),
  PLANT_WEBHOOKS_ALLOW_PRIVATE: booleanFlag(DEFAULTS.webhooks.allowPrivate),
  PLANT_WEBHOOK_DNS_TIMEOUT_MS: milliseconds(DEFAULTS.webhooks.dnsTimeoutMs, 1, 60_000),
  PLANT_WEBHOOK_ROTATION_GRACE_MS: milliseconds(DEFAULTS.webhooks.rotationGraceMs, 0, MAX_ROTATION_GRACE_MS),
  PLANT_WEBHOOK_ENDPOINTS_MAX: wholeNumber(DEFAULTS.webhooks.endpointsMax, 1, 100_000),
  PLANT_WEBHOOK_DELIVERY_NICE: wholeNumber(DEFAULTS.webhooks.deliveryNice, 0, 19),
  PLANT_WEBHOOK_SECRETS_KEY: optional(
    z
      .string()
      // Never echoed back: it is the key.
      .refine((text) => /^[A-Za-z0-9+/]+={0,2}$/.test(text.trim()), SECRETS_KEY_MESSAGE)
      .transform((text) => Buffer.from(text.trim(), 'base64'))
      .refine((key) => key.length === SECRETS_KEY_BYTES, SECRETS_KEY_MESSAGE)
      .optional(),
  ),
  NODE_ENV: optional(z.string().optional()),
  PLANT_WEBHOOK_RETENTION_MS: longMilliseconds(DEFAULTS.webhooks.retentionMs, 3650),
  PLANT_WEBHOOK_DISABLE_AFTER_MS: longMilliseconds(DEFAULTS.webhooks.disableAfterMs, 365),
  // Unset: the deprecated PLANT_WEBHOOK_WORKER's value, else DEFAULTS.webhooks.deliver (loadConfig).
  PLANT_WEBHOOK_DELIVERY: optionalBoolean,
  /** Deprecated: PLANT_WEBHOOK_DELIVERY's former name, in its own syntax. */
  PLANT_WEBHOOK_WORKER: optional(
    z
      .enum(['on', 'off'], { errorMap: () => ({ message: 'must be on or off' }) })
      .transform((text) => text === 'on')
      .optional(),
  ),
  // Tracing: the standard OpenTelemetry variables, read by the SDK; checked here so that a typo stops
  // the start with one line instead of a warning nobody reads. The rest go to the SDK as they are.
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpEndpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  OTEL_TRACES_EXPORTER: optional(
    z
      .string()
      .transform((list) => list.split(',').map((name) => name.trim()))
      .refine(
        (names) => names.every((name) => TRACES_EXPORTERS.includes(name)),
        `must be a comma-separated list of ${TRACES_EXPORTERS.join(', ')}`,
      )
      .optional(),
  ),
  OTEL_SDK_DISABLED: booleanFlag(DEFAULTS.otelSdkDisabled),
  PLANT_LOG_BUFFER_BYTES: wholeNumber(DEFAULTS.logBufferBytes, 16_384, 1_073_741_824, ' of bytes'),
  LOG_LEVEL: optional(
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        errorMap: () => ({ message: 'must be one of fatal, error, warn, info, debug, trace, silent' }),
      })
      .default(DEFAULTS.logLevel),
  ),
});

type Vars = z.infer<typeof Env>;

export type JwtConfig = {
  jwksUrl: string;
  issuer: string;
  audience: string;
  algorithms: string[];
  /** PLANT_API_JWT_CLOCK_TOLERANCE_MS: how far the identity provider's clock may be off for exp and nbf. */
  clockToleranceMs: number;
  /** PLANT_API_JWKS_MAX_STALE_MS: how long the keys last fetched still verify once they cannot be fetched again. */
  jwksMaxStaleMs: number;
  /** PLANT_API_JWT_PRINCIPAL_CLAIM: the claim naming a token's principal. */
  principalClaim: string;
};

export type Config = {
  port: number;
  host: string;
  /** Express's `trust proxy`: whose X-Forwarded-For names the client (`req.ip`). */
  trustProxy: TrustProxy;
  /** Set when PLANT_METRICS_PORT is: /metrics, /healthz and /readyz on a listener of their own. */
  metrics?: { port: number; host: string };
  /**
   * PLANT_METRICS_ON_API_PORT: whether the API's port answers GET /metrics too. Off unless set: the
   * API's port is the public one, and metrics tell anyone who asks about the traffic and the store.
   */
  metricsOnApiPort: boolean;
  /** PLANT_API_TOKENS: plain tokens and `sha256:<hex>` entries, each the operator's or a named principal's. */
  apiTokens: ApiTokenEntry[];
  dataDir: string;
  logLevel: string;
  /** PLANT_LOG_BUFFER_BYTES: log lines waiting for stdout at most; beyond, lines are dropped and counted. */
  logBufferBytes: number;
  rateLimitPerToken: number;
  authFailuresPerMinute: number;
  jwt?: JwtConfig;
  /** Whether JWTs must carry each route's scope: by default in JWT mode, off only when set false. */
  requireScopes: boolean;
  /** Set when DATABASE_URL is: the PostgreSQL store instead of the embedded one. */
  database?: DatabaseConfig;
  server: ServerConfig;
  /** Admission control of the API server: beyond these, requests are shed with 503. */
  admission: AdmissionLimits;
  /** Bytes of lists (plants, deliveries, webhook endpoints) answered at once; past them a list gets 503. */
  maxAnswerBytes: number;
  webhooks: WebhookConfig;
  /** PLANT_CORS_ORIGINS: origins whose pages may call the API, or `*`; unset, no CORS headers. */
  corsOrigins?: CorsOrigins;
  /**
   * Whether to start OpenTelemetry tracing (ops/tracing.ts): an OTLP endpoint or OTEL_TRACES_EXPORTER
   * is set, not to `none`, and OTEL_SDK_DISABLED is not true.
   */
  tracing: boolean;
  /** Deprecated variables that were set, each as a sentence: logged once at start. */
  deprecations: string[];
};

export type WebhookConfig = {
  /** A delivery attempt must be answered 2xx within this. */
  timeoutMs: number;
  /** The delay before each retry; once spent, the delivery is failed. */
  retryDelaysMs: number[];
  /** Whether receivers may be on private, loopback… addresses and plain http (tests, in-cluster receivers). */
  allowPrivate: boolean;
  /** PLANT_WEBHOOK_DNS_TIMEOUT_MS: a receiver's host name must resolve within this. */
  dnsTimeoutMs: number;
  /** How long a rotated-out secret still signs deliveries beside the new one. */
  rotationGraceMs: number;
  /** PLANT_WEBHOOK_ENDPOINTS_MAX: endpoints of all principals together. */
  endpointsMax: number;
  /** PLANT_WEBHOOK_SECRETS_KEY: seals signing secrets at rest; unset, they are stored in plain text. */
  secretsKey?: Buffer;
  /** NODE_ENV=production: plain-text secrets are worth a warning at start. */
  production: boolean;
  /** Deliveries finished (delivered or failed) longer ago than this are deleted. */
  retentionMs: number;
  /** An endpoint whose every delivery attempt failed for this long is disabled. */
  disableAfterMs: number;
  /**
   * PLANT_WEBHOOK_DELIVERY: whether this process delivers, in its delivery thread. False for API-only
   * replicas, when delivery processes (`pnpm worker`, dist/worker.js) deliver instead.
   */
  deliver: boolean;
  /**
   * PLANT_WEBHOOK_DELIVERY_NICE: how many nice levels below the HTTP thread the delivery thread runs
   * (0: the same priority). Only while the cores are saturated does it matter: creates then go first.
   */
  deliveryNice: number;
};

export type DatabaseConfig = {
  url: string;
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /**
   * Longest a store operation may take, waiting for a connection and running its statements
   * together: past it, it fails as unavailable (503) and its statement is cancelled on the server.
   */
  deadlineMs: number;
  /** Apply pending migrations at start (default), or only check that the schema is current. */
  migrate: boolean;
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const parse = <T extends z.ZodTypeAny>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> => {
  const result = schema.safeParse(env);
  if (!result.success) {
    const [issue] = result.error.issues;
    throw new ConfigError(`Invalid configuration: ${issue?.path.join('.')} ${issue?.message}.`);
  }
  return result.data;
};

/** What a process runs: the API (with delivery unless PLANT_WEBHOOK_DELIVERY=false), or delivery alone (dist/worker.js). */
export type Role = 'api' | 'worker';

const DATABASE_FOR_WORKER =
  'is required by the webhook worker (dist/worker.js); the embedded SQLite store is held by one process, which delivers itself with PLANT_WEBHOOK_DELIVERY=true';

/** Why a delivery-only process cannot run on the embedded store. */
export const WORKER_NEEDS_DATABASE = `Invalid configuration: DATABASE_URL ${DATABASE_FOR_WORKER}.`;

const WORKER_DEPRECATED =
  'PLANT_WEBHOOK_WORKER is deprecated: set PLANT_WEBHOOK_DELIVERY=true or false instead (on is true, off is false)';

/**
 * The rules between variables, in the order they are checked; the first broken one is reported as
 * `<variable> <message>`, like a bad value.
 */
const crossFieldRules = (role: Role) => (vars: Vars, context: z.RefinementCtx) => {
  const broken = (variable: keyof Vars, message: string) =>
    context.addIssue({ code: z.ZodIssueCode.custom, path: [variable], message });
  if (role === 'worker' && vars.DATABASE_URL === undefined) broken('DATABASE_URL', DATABASE_FOR_WORKER);
  if (vars.PLANT_HTTP_HEADERS_TIMEOUT_MS > vars.PLANT_HTTP_REQUEST_TIMEOUT_MS) {
    broken('PLANT_HTTP_HEADERS_TIMEOUT_MS', 'must not exceed PLANT_HTTP_REQUEST_TIMEOUT_MS');
  }
  if (vars.PLANT_METRICS_PORT !== undefined) {
    const metricsHost = vars.PLANT_METRICS_HOST ?? vars.HOST;
    if (vars.PLANT_METRICS_PORT !== 0 && vars.PLANT_METRICS_PORT === vars.PORT && metricsHost === vars.HOST) {
      broken('PLANT_METRICS_PORT', 'must differ from PORT');
    }
  } else if (vars.PLANT_METRICS_HOST !== undefined) {
    broken('PLANT_METRICS_HOST', 'needs PLANT_METRICS_PORT');
  }
  // Replicas behind one address must accept the same tokens; a token generated per replica would not.
  if (
    role === 'api' &&
    vars.DATABASE_URL !== undefined &&
    (vars.PLANT_API_TOKENS ?? []).length === 0 &&
    vars.PLANT_API_JWKS_URL === undefined
  ) {
    broken(
      'PLANT_API_TOKENS',
      '(or PLANT_API_JWKS_URL) is required with DATABASE_URL, so that every replica accepts the same tokens',
    );
  }
  if (vars.PLANT_API_JWKS_URL !== undefined) {
    for (const name of ['PLANT_API_JWT_ISSUER', 'PLANT_API_JWT_AUDIENCE'] as const) {
      if (!vars[name]) broken(name, 'is required with PLANT_API_JWKS_URL');
    }
  } else if (vars.PLANT_API_JWT_REQUIRE_SCOPES === true) {
    broken('PLANT_API_JWT_REQUIRE_SCOPES', 'needs PLANT_API_JWKS_URL');
  }
  if (
    vars.PLANT_WEBHOOK_DELIVERY !== undefined &&
    vars.PLANT_WEBHOOK_WORKER !== undefined &&
    vars.PLANT_WEBHOOK_DELIVERY !== vars.PLANT_WEBHOOK_WORKER
  ) {
    broken(
      'PLANT_WEBHOOK_DELIVERY',
      'disagrees with the deprecated PLANT_WEBHOOK_WORKER; set PLANT_WEBHOOK_DELIVERY alone',
    );
  }
};

/** The environment with the rules between its variables, for a process of `role`. */
export const checkedEnv = (role: Role) => Env.superRefine(crossFieldRules(role));

const databaseConfig = (vars: Vars, url: string): DatabaseConfig => ({
  url,
  poolSize: vars.PLANT_DB_POOL_SIZE,
  connectTimeoutMs: vars.PLANT_DB_CONNECT_TIMEOUT_MS,
  statementTimeoutMs: vars.PLANT_DB_STATEMENT_TIMEOUT_MS,
  deadlineMs: vars.PLANT_DB_DEADLINE_MS,
  migrate: vars.PLANT_DB_MIGRATE,
});

/** The PostgreSQL settings alone (for the migrate command); DATABASE_URL is required. */
export const loadDatabaseConfig = (env: NodeJS.ProcessEnv): DatabaseConfig => {
  const vars = parse(Env, env);
  if (vars.DATABASE_URL === undefined) throw new ConfigError('Invalid configuration: DATABASE_URL is required.');
  return databaseConfig(vars, vars.DATABASE_URL);
};

const tracingRequested = (vars: Vars): boolean => {
  if (vars.OTEL_SDK_DISABLED) return false;
  const exporters = vars.OTEL_TRACES_EXPORTER;
  if (exporters !== undefined) return exporters.some((name) => name !== 'none');
  return vars.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined;
};

/** Reads and validates the environment; a bad value or a broken rule throws one line naming the variable. */
export const loadConfig = (env: NodeJS.ProcessEnv, role: Role = 'api'): Config => {
  const vars = parse(checkedEnv(role), env);
  const config: Config = {
    port: vars.PORT,
    host: vars.HOST,
    trustProxy: vars.PLANT_TRUST_PROXY ?? false,
    apiTokens: vars.PLANT_API_TOKENS ?? [],
    dataDir: vars.PLANT_DATA_DIR,
    logLevel: vars.LOG_LEVEL,
    logBufferBytes: vars.PLANT_LOG_BUFFER_BYTES,
    rateLimitPerToken: vars.PLANT_RATE_LIMIT_PER_TOKEN,
    authFailuresPerMinute: vars.PLANT_AUTH_FAILURES_PER_MINUTE,
    metricsOnApiPort: vars.PLANT_METRICS_ON_API_PORT,
    requireScopes: vars.PLANT_API_JWT_REQUIRE_SCOPES ?? vars.PLANT_API_JWKS_URL !== undefined,
    server: {
      shutdownDrainMs: vars.PLANT_SHUTDOWN_DRAIN_MS,
      shutdownGraceMs: vars.PLANT_SHUTDOWN_GRACE_MS,
      headersTimeoutMs: vars.PLANT_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: vars.PLANT_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: vars.PLANT_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    },
    admission: {
      maxActive: vars.PLANT_MAX_ACTIVE,
      maxInFlight: vars.PLANT_MAX_IN_FLIGHT,
      maxConnections: vars.PLANT_MAX_CONNECTIONS,
      maxEventLoopDelayMs: vars.PLANT_MAX_EVENT_LOOP_DELAY_MS,
    },
    maxAnswerBytes: vars.PLANT_MAX_ANSWER_BYTES,
    webhooks: {
      timeoutMs: vars.PLANT_WEBHOOK_TIMEOUT_MS,
      retryDelaysMs: vars.PLANT_WEBHOOK_RETRY_DELAYS_MS,
      allowPrivate: vars.PLANT_WEBHOOKS_ALLOW_PRIVATE,
      dnsTimeoutMs: vars.PLANT_WEBHOOK_DNS_TIMEOUT_MS,
      rotationGraceMs: vars.PLANT_WEBHOOK_ROTATION_GRACE_MS,
      endpointsMax: vars.PLANT_WEBHOOK_ENDPOINTS_MAX,
      ...(vars.PLANT_WEBHOOK_SECRETS_KEY !== undefined && { secretsKey: vars.PLANT_WEBHOOK_SECRETS_KEY }),
      production: vars.NODE_ENV === 'production',
      retentionMs: vars.PLANT_WEBHOOK_RETENTION_MS,
      disableAfterMs: vars.PLANT_WEBHOOK_DISABLE_AFTER_MS,
      deliver: vars.PLANT_WEBHOOK_DELIVERY ?? vars.PLANT_WEBHOOK_WORKER ?? DEFAULTS.webhooks.deliver,
      deliveryNice: vars.PLANT_WEBHOOK_DELIVERY_NICE,
    },
    tracing: tracingRequested(vars),
    deprecations: vars.PLANT_WEBHOOK_WORKER === undefined ? [] : [WORKER_DEPRECATED],
  };
  if (vars.PLANT_CORS_ORIGINS !== undefined) config.corsOrigins = vars.PLANT_CORS_ORIGINS;
  if (vars.PLANT_METRICS_PORT !== undefined) {
    config.metrics = { port: vars.PLANT_METRICS_PORT, host: vars.PLANT_METRICS_HOST ?? vars.HOST };
  }
  if (vars.DATABASE_URL !== undefined) config.database = databaseConfig(vars, vars.DATABASE_URL);
  if (vars.PLANT_API_JWKS_URL !== undefined) {
    config.jwt = {
      jwksUrl: vars.PLANT_API_JWKS_URL,
      issuer: vars.PLANT_API_JWT_ISSUER as string,
      audience: vars.PLANT_API_JWT_AUDIENCE as string,
      algorithms: vars.PLANT_API_JWT_ALGORITHMS,
      clockToleranceMs: vars.PLANT_API_JWT_CLOCK_TOLERANCE_MS,
      jwksMaxStaleMs: vars.PLANT_API_JWKS_MAX_STALE_MS,
      principalClaim: vars.PLANT_API_JWT_PRINCIPAL_CLAIM,
    };
  }
  return config;
};
