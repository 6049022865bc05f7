import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadDatabaseConfig } from './config.ts';

/** The variables the container image sets (its Dockerfile's ENV instruction). */
const imageEnvironment = (): Record<string, string> => {
  const dockerfile = readFileSync(join(import.meta.dirname, '..', 'Dockerfile'), 'utf8');
  const instruction = /^ENV ((?:.*\\\n)*.*)$/m.exec(dockerfile)?.[1] ?? '';
  return Object.fromEntries(
    instruction
      .split(/\s*\\\n\s*|\s+/)
      .filter((pair) => pair.includes('='))
      .map((pair) => pair.split('=', 2) as [string, string]),
  );
};

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      trustProxy: false,
      apiTokens: [],
      dataDir: './data',
      logLevel: 'info',
      logBufferBytes: 4_194_304,
      rateLimitPerToken: 1000,
      authFailuresPerMinute: 60,
      metricsOnApiPort: false,
      requireScopes: false,
      server: {
        shutdownDrainMs: 3_000,
        shutdownGraceMs: 10_000,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        keepAliveTimeoutMs: 5_000,
      },
      admission: { maxActive: 128, maxInFlight: 1_024, maxConnections: 10_000, maxEventLoopDelayMs: 500 },
      maxAnswerBytes: 16 * 1024 * 1024,
      webhooks: {
        timeoutMs: 15_000,
        retryDelaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
        allowPrivate: false,
        dnsTimeoutMs: 5000,
        rotationGraceMs: 86_400_000,
        endpointsMax: 1000,
        production: false,
        retentionMs: 2_592_000_000,
        disableAfterMs: 432_000_000,
        deliver: true,
        deliveryNice: 10,
      },
      tracing: false,
      deprecations: [],
    });
  });

  it('traces when an OTLP endpoint or OTEL_TRACES_EXPORTER asks, unless the exporter is none or the SDK disabled', () => {
    const tracing = (env: NodeJS.ProcessEnv) => loadConfig(env).tracing;
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces' })).toBe(true);
    expect(tracing({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    // One exporter other than none is enough, wherever it stands in the list.
    expect(tracing({ OTEL_TRACES_EXPORTER: 'none, console' })).toBe(true);
    expect(tracing({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracing({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    // Settings of the SDK alone ask for nothing.
    expect(
      tracing({
        OTEL_SERVICE_NAME: 'plants',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
      }),
    ).toBe(false);
  });

  it('reads the admission bounds; 0 turns the event-loop bound off', () => {
    expect(
      loadConfig({
        PLANT_MAX_ACTIVE: '32',
        PLANT_MAX_IN_FLIGHT: '64',
        PLANT_MAX_CONNECTIONS: '256',
        PLANT_MAX_EVENT_LOOP_DELAY_MS: '0',
      }).admission,
    ).toStrictEqual({ maxActive: 32, maxInFlight: 64, maxConnections: 256, maxEventLoopDelayMs: 0 });
    // 0: every connection is read at once, as before the bound existed.
    expect(loadConfig({ PLANT_MAX_ACTIVE: '0' }).admission.maxActive).toBe(0);
    expect(loadConfig({ PLANT_MAX_ANSWER_BYTES: '1048576' }).maxAnswerBytes).toBe(1_048_576);
  });

  it('reads the webhook settings', () => {
    expect(
      loadConfig({
        PLANT_WEBHOOK_TIMEOUT_MS: '2500',
        PLANT_WEBHOOK_RETRY_DELAYS_MS: '100, 200,0',
        PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true',
        PLANT_WEBHOOK_DNS_TIMEOUT_MS: '750',
        PLANT_WEBHOOK_RETENTION_MS: '604800000',
        PLANT_WEBHOOK_DISABLE_AFTER_MS: '86400000',
        PLANT_WEBHOOK_DELIVERY: 'false',
        PLANT_WEBHOOK_DELIVERY_NICE: '3',
      }).webhooks,
    ).toStrictEqual({
      timeoutMs: 2_500,
      retryDelaysMs: [100, 200, 0],
      allowPrivate: true,
      dnsTimeoutMs: 750,
      rotationGraceMs: 86_400_000,
      endpointsMax: 1000,
      production: false,
      retentionMs: 604_800_000,
      disableAfterMs: 86_400_000,
      deliver: false,
      deliveryNice: 3,
    });
  });

  it('still reads the deprecated PLANT_WEBHOOK_WORKER (on or off), with a deprecation to log at start', () => {
    const deprecation =
      'PLANT_WEBHOOK_WORKER is deprecated: set PLANT_WEBHOOK_DELIVERY=true or false instead (on is true, off is false)';
    expect(loadConfig({ PLANT_WEBHOOK_WORKER: 'off' })).toMatchObject({
      webhooks: { deliver: false },
      deprecations: [deprecation],
    });
    expect(loadConfig({ PLANT_WEBHOOK_WORKER: 'on' }).webhooks.deliver).toBe(true);
    expect(loadConfig({ PLANT_WEBHOOK_WORKER: 'off', PLANT_WEBHOOK_DELIVERY: 'false' })).toMatchObject({
      webhooks: { deliver: false },
      deprecations: [deprecation],
    });
    expect(loadConfig({ PLANT_WEBHOOK_DELIVERY: 'false' }).deprecations).toStrictEqual([]);
  });

  it('reads the webhook secrets key, the rotation grace and NODE_ENV', () => {
    const key = Buffer.alloc(32, 3);
    expect(
      loadConfig({
        PLANT_WEBHOOK_SECRETS_KEY: key.toString('base64'),
        PLANT_WEBHOOK_ROTATION_GRACE_MS: '0',
        NODE_ENV: 'production',
      }).webhooks,
    ).toMatchObject({ secretsKey: key, rotationGraceMs: 0, production: true });
  });

  it.each([
    Buffer.alloc(16, 1).toString('base64'),
    Buffer.alloc(33, 1).toString('base64'),
    Buffer.alloc(32, 1).toString('hex'),
    `${Buffer.alloc(32, 1).toString('base64').slice(0, 20)}!${Buffer.alloc(32, 1).toString('base64').slice(21)}`,
  ])('refuses a webhook secrets key that is not 32 bytes in base64, without echoing it', (value) => {
    expect(() => loadConfig({ PLANT_WEBHOOK_SECRETS_KEY: value })).toThrow(
      'Invalid configuration: PLANT_WEBHOOK_SECRETS_KEY must be 32 random bytes in base64 (openssl rand -base64 32).',
    );
    expect(() => loadConfig({ PLANT_WEBHOOK_SECRETS_KEY: value })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(value.slice(0, 8)) }),
    );
  });

  it('selects PostgreSQL with DATABASE_URL, with pool and timeout defaults, and reads the server timeouts', () => {
    const env = { PLANT_API_TOKENS: 'first-token-0123456789' };
    expect(loadConfig({ ...env, DATABASE_URL: 'postgres://plants:pw@db.internal:5432/plants' }).database).toEqual({
      url: 'postgres://plants:pw@db.internal:5432/plants',
      poolSize: 10,
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 5_000,
      deadlineMs: 5_000,
      migrate: true,
    });
    expect(
      loadConfig({
        ...env,
        DATABASE_URL: 'postgresql://db/plants?sslmode=require',
        PLANT_DB_POOL_SIZE: '25',
        PLANT_DB_CONNECT_TIMEOUT_MS: '1500',
        PLANT_DB_STATEMENT_TIMEOUT_MS: '750',
        PLANT_DB_DEADLINE_MS: '2500',
        PLANT_DB_MIGRATE: 'false',
        PLANT_SHUTDOWN_DRAIN_MS: '0',
        PLANT_SHUTDOWN_GRACE_MS: '0',
        PLANT_HTTP_HEADERS_TIMEOUT_MS: '2000',
        PLANT_HTTP_REQUEST_TIMEOUT_MS: '4000',
        PLANT_HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
      }),
    ).toMatchObject({
      database: {
        url: 'postgresql://db/plants?sslmode=require',
        poolSize: 25,
        connectTimeoutMs: 1_500,
        statementTimeoutMs: 750,
        deadlineMs: 2_500,
        migrate: false,
      },
      server: {
        shutdownDrainMs: 0,
        shutdownGraceMs: 0,
        headersTimeoutMs: 2_000,
        requestTimeoutMs: 4_000,
        keepAliveTimeoutMs: 65_000,
      },
    });
    expect(loadConfig({}).database).toBeUndefined();
  });

  it('reads every variable, splitting and trimming the token list', () => {
    const config = loadConfig({
      PORT: '4000',
      HOST: '0.0.0.0',
      PLANT_API_TOKENS: ' first-token-0123456789 , second-token-0123456789,',
      PLANT_DATA_DIR: '/var/lib/plants',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      apiTokens: [{ token: 'first-token-0123456789' }, { token: 'second-token-0123456789' }],
      dataDir: '/var/lib/plants',
      logLevel: 'warn',
    });
  });

  it('accepts tokens given as SHA-256 digests', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(loadConfig({ PLANT_API_TOKENS: `${digest},plain-token-0123456789` }).apiTokens).toEqual([
      { token: digest },
      { token: 'plain-token-0123456789' },
    ]);
  });

  it('reads named tokens: a principal, with every route scope or the scopes listed, and several tokens of one principal', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    expect(
      loadConfig({
        PLANT_API_TOKENS: [
          'operator-token-0123456789',
          `team-a@${digest}`,
          'team-a@team-a-new-token-0123456789',
          'auditor=webhooks:admin+plants:read@auditor-token-0123456789',
        ].join(','),
      }).apiTokens,
    ).toStrictEqual([
      { token: 'operator-token-0123456789' },
      {
        token: digest,
        principal: { name: 'team-a', scopes: ['plants:read', 'plants:write', 'webhooks:read', 'webhooks:write'] },
      },
      {
        token: 'team-a-new-token-0123456789',
        principal: { name: 'team-a', scopes: ['plants:read', 'plants:write', 'webhooks:read', 'webhooks:write'] },
      },
      { token: 'auditor-token-0123456789', principal: { name: 'auditor', scopes: ['webhooks:admin', 'plants:read'] } },
    ]);
  });

  it.each([
    ['an unknown scope', 'team-a=plants:delete@team-a-token-0123456789'],
    ['a scope listed twice', 'team-a=plants:read+plants:read@team-a-token-0123456789'],
    ['an empty name', '@team-a-token-0123456789'],
    ['a name with a space', 'team a@team-a-token-0123456789'],
    ['two equals signs', 'team-a=plants:read=x@team-a-token-0123456789'],
    ['a short token after a name', 'team-a@short'],
  ])('refuses a token entry with %s, naming the syntax', (_, entry) => {
    expect(() => loadConfig({ PLANT_API_TOKENS: entry })).toThrow(
      /^Invalid configuration: PLANT_API_TOKENS must be a comma-separated list of entries \[name\[=scope\+scope…\]@\]token/,
    );
  });

  it('refuses two tokens of one principal with different scopes', () => {
    expect(() =>
      loadConfig({
        PLANT_API_TOKENS: 'team-a=plants:read@team-a-token-0123456789,team-a@team-a-new-token-0123456789',
      }),
    ).toThrow(
      "Invalid configuration: PLANT_API_TOKENS gives the principal team-a different scopes in two entries; a principal's tokens must have the same scopes.",
    );
  });

  it("reads the JWT principal claim (sub by default) and the cap on all principals' webhook endpoints", () => {
    const jwt = {
      PLANT_API_JWKS_URL: 'https://issuer.example.com/jwks',
      PLANT_API_JWT_ISSUER: 'https://issuer.example.com/',
      PLANT_API_JWT_AUDIENCE: 'plants',
    };
    expect(loadConfig(jwt).jwt?.principalClaim).toBe('sub');
    expect(loadConfig({ ...jwt, PLANT_API_JWT_PRINCIPAL_CLAIM: 'azp' }).jwt?.principalClaim).toBe('azp');
    expect(() => loadConfig({ ...jwt, PLANT_API_JWT_PRINCIPAL_CLAIM: 'a b' })).toThrow(/PLANT_API_JWT_PRINCIPAL_CLAIM/);
    expect(loadConfig({ PLANT_WEBHOOK_ENDPOINTS_MAX: '5000' }).webhooks.endpointsMax).toBe(5000);
    expect(loadConfig({ PLANT_WEBHOOK_DELIVERY_NICE: '0' }).webhooks.deliveryNice).toBe(0);
    expect(loadConfig({ PLANT_WEBHOOK_DELIVERY_NICE: '19' }).webhooks.deliveryNice).toBe(19);
    expect(() => loadConfig({ PLANT_WEBHOOK_DELIVERY_NICE: '20' })).toThrow(/PLANT_WEBHOOK_DELIVERY_NICE/);
    expect(() => loadConfig({ PLANT_WEBHOOK_DELIVERY_NICE: '-1' })).toThrow(/PLANT_WEBHOOK_DELIVERY_NICE/);
    expect(() => loadConfig({ PLANT_WEBHOOK_ENDPOINTS_MAX: '0' })).toThrow(/PLANT_WEBHOOK_ENDPOINTS_MAX/);
  });

  it('reads rate limits and JWT settings', () => {
    expect(
      loadConfig({
        PLANT_RATE_LIMIT_PER_TOKEN: '0',
        PLANT_AUTH_FAILURES_PER_MINUTE: '5.5',
        PLANT_API_JWKS_URL: 'https://issuer.example.com/.well-known/jwks.json',
        PLANT_API_JWT_ISSUER: 'https://issuer.example.com/',
        PLANT_API_JWT_AUDIENCE: 'plant-store',
        PLANT_API_JWT_ALGORITHMS: 'ES256, RS256',
        PLANT_API_JWT_REQUIRE_SCOPES: 'true',
        PLANT_API_JWT_CLOCK_TOLERANCE_MS: '5000',
      }),
    ).toMatchObject({
      rateLimitPerToken: 0,
      authFailuresPerMinute: 5.5,
      requireScopes: true,
      jwt: {
        jwksUrl: 'https://issuer.example.com/.well-known/jwks.json',
        issuer: 'https://issuer.example.com/',
        audience: 'plant-store',
        algorithms: ['ES256', 'RS256'],
        clockToleranceMs: 5_000,
        jwksMaxStaleMs: 3_600_000,
        principalClaim: 'sub',
      },
    });
  });

  it('enforces scopes in JWT mode unless PLANT_API_JWT_REQUIRE_SCOPES is false', () => {
    const jwt = {
      PLANT_API_JWKS_URL: 'https://issuer.example.com/jwks.json',
      PLANT_API_JWT_ISSUER: 'https://issuer.example.com/',
      PLANT_API_JWT_AUDIENCE: 'plant-store',
    };
    expect(loadConfig(jwt).requireScopes).toBe(true);
    expect(loadConfig({ ...jwt, PLANT_API_JWT_REQUIRE_SCOPES: '' }).requireScopes).toBe(true);
    expect(loadConfig({ ...jwt, PLANT_API_JWT_REQUIRE_SCOPES: 'false' }).requireScopes).toBe(false);
  });

  it('accepts plain http for the JWKS of a loopback identity provider only', () => {
    const jwt = { PLANT_API_JWT_ISSUER: 'https://issuer.example.com/', PLANT_API_JWT_AUDIENCE: 'plant-store' };
    for (const url of [
      'http://localhost:8080/jwks',
      'http://127.0.0.1:9/jwks',
      'http://127.8.9.10/jwks',
      'http://[::1]:80/k',
    ]) {
      expect(loadConfig({ ...jwt, PLANT_API_JWKS_URL: url }).jwt?.jwksUrl).toBe(url);
    }
  });

  it('reads the CORS origins: exact origins, or * alone; unset, none', () => {
    expect(loadConfig({}).corsOrigins).toBeUndefined();
    expect(loadConfig({ PLANT_CORS_ORIGINS: '' }).corsOrigins).toBeUndefined();
    expect(
      loadConfig({ PLANT_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173,http://[::1]:8080' })
        .corsOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173', 'http://[::1]:8080']);
    expect(loadConfig({ PLANT_CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
  });

  it('reads the trust proxy setting in Express syntax', () => {
    expect(loadConfig({ PLANT_TRUST_PROXY: 'loopback' }).trustProxy).toEqual(['loopback']);
    expect(loadConfig({ PLANT_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ PLANT_TRUST_PROXY: ' 2 ' }).trustProxy).toBe(2);
    expect(loadConfig({ PLANT_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8, uniquelocal' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.168.1.7',
      'fd00::/8',
      'uniquelocal',
    ]);
  });

  it('serves /metrics on the API port only with PLANT_METRICS_ON_API_PORT=true', () => {
    expect(loadConfig({}).metricsOnApiPort).toBe(false);
    expect(loadConfig({ PLANT_METRICS_PORT: '9464' }).metricsOnApiPort).toBe(false);
    expect(loadConfig({ PLANT_METRICS_ON_API_PORT: 'true' }).metricsOnApiPort).toBe(true);
    expect(() => loadConfig({ PLANT_METRICS_ON_API_PORT: 'yes' })).toThrow(
      'Invalid configuration: PLANT_METRICS_ON_API_PORT must be true or false.',
    );
  });

  it('serves no /metrics on the public port in the container image by default', () => {
    const environment = imageEnvironment();
    expect(environment).toMatchObject({ HOST: '0.0.0.0', PLANT_DATA_DIR: '/data' });
    const config = loadConfig(environment);
    expect(config.metricsOnApiPort).toBe(false);
    expect(config.metrics).toBeUndefined();
  });

  it('gives metrics a listener of their own with PLANT_METRICS_PORT, on HOST unless PLANT_METRICS_HOST', () => {
    expect(loadConfig({}).metrics).toBeUndefined();
    expect(loadConfig({ HOST: '0.0.0.0', PLANT_METRICS_PORT: '9464' }).metrics).toEqual({
      port: 9464,
      host: '0.0.0.0',
    });
    expect(loadConfig({ PLANT_METRICS_PORT: '9464', PLANT_METRICS_HOST: '10.1.2.3' }).metrics).toEqual({
      port: 9464,
      host: '10.1.2.3',
    });
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ PORT: '', LOG_LEVEL: '' })).toMatchObject({ port: 3000, logLevel: 'info' });
  });

  it.each([
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' },
      'Invalid configuration: OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL (the OTLP collector, e.g. http://localhost:4318).',
    ],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuff' },
      'Invalid configuration: OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http/json, grpc.',
    ],
    [
      { OTEL_TRACES_EXPORTER: 'otlp,jaeger' },
      'Invalid configuration: OTEL_TRACES_EXPORTER must be a comma-separated list of otlp, console, zipkin, none.',
    ],
    [{ OTEL_SDK_DISABLED: 'yes' }, 'Invalid configuration: OTEL_SDK_DISABLED must be true or false.'],
    [{ PORT: '70000' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [
      { LOG_LEVEL: 'loud' },
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent.',
    ],
    [
      { PLANT_API_TOKENS: 'short' },
      /^Invalid configuration: PLANT_API_TOKENS must be a comma-separated list of entries/,
    ],
    [{ PLANT_API_TOKENS: 'has a space in it, really long' }, /^Invalid configuration: PLANT_API_TOKENS /],
    [{ PLANT_API_TOKENS: 'sha256:abc' }, /^Invalid configuration: PLANT_API_TOKENS /],
    [{ PLANT_RATE_LIMIT_PER_TOKEN: '-1' }, /^Invalid configuration: PLANT_RATE_LIMIT_PER_TOKEN must be a non-negative/],
    [{ PLANT_API_JWKS_URL: 'ftp://x/keys' }, /^Invalid configuration: PLANT_API_JWKS_URL must be an https URL /],
    [
      { PLANT_API_JWKS_URL: 'http://issuer.example.com/jwks' },
      'Invalid configuration: PLANT_API_JWKS_URL must be an https URL (plain http only to a loopback host: localhost, 127.0.0.0/8, ::1).',
    ],
    [{ PLANT_API_JWKS_URL: 'http://10.0.0.1/jwks' }, /^Invalid configuration: PLANT_API_JWKS_URL must be an https/],
    [{ PLANT_API_JWKS_URL: 'http://localhost.evil.test/k' }, /^Invalid configuration: PLANT_API_JWKS_URL must be/],
    [
      { PLANT_CORS_ORIGINS: 'https://app.example.com/' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'https://app.example.com/app' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: '*,https://app.example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'app.example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'ftp://files.example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'https://App.Example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'https://a.example.com,,https://b.example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'https://user@app.example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_CORS_ORIGINS: 'null' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [
      { PLANT_TRUST_PROXY: 'true' },
      /^Invalid configuration: PLANT_TRUST_PROXY must be a hop count, .* \(true is refused/,
    ],
    [{ PLANT_TRUST_PROXY: '10.0.0.0/33' }, /^Invalid configuration: PLANT_TRUST_PROXY must be /],
    [{ PLANT_TRUST_PROXY: 'loopback,,10.0.0.1' }, /^Invalid configuration: PLANT_TRUST_PROXY must be /],
    [{ PLANT_TRUST_PROXY: 'proxy.internal' }, /^Invalid configuration: PLANT_TRUST_PROXY must be /],
    [{ PLANT_TRUST_PROXY: '::ffff:10.0.0.0/104' }, /^Invalid configuration: PLANT_TRUST_PROXY must be /],
    [
      { PLANT_METRICS_PORT: '99999' },
      'Invalid configuration: PLANT_METRICS_PORT must be a port number from 0 to 65535.',
    ],
    [{ PLANT_METRICS_PORT: '3000' }, 'Invalid configuration: PLANT_METRICS_PORT must differ from PORT.'],
    [{ PLANT_METRICS_HOST: '0.0.0.0' }, 'Invalid configuration: PLANT_METRICS_HOST needs PLANT_METRICS_PORT.'],
    [{ PLANT_API_JWKS_URL: 'https://x/keys' }, /^Invalid configuration: PLANT_API_JWT_ISSUER is required with/],
    [
      {
        PLANT_API_JWKS_URL: 'https://x/keys',
        PLANT_API_JWT_ISSUER: 'x',
        PLANT_API_JWT_AUDIENCE: 'y',
        PLANT_API_JWT_ALGORITHMS: 'none',
      },
      /^Invalid configuration: PLANT_API_JWT_ALGORITHMS must be/,
    ],
    [{ PLANT_API_JWT_REQUIRE_SCOPES: 'true' }, /needs PLANT_API_JWKS_URL/],
    [{ PLANT_API_JWT_REQUIRE_SCOPES: 'yes' }, /PLANT_API_JWT_REQUIRE_SCOPES must be true or false/],
    [
      { DATABASE_URL: 'mysql://db/plants', PLANT_API_TOKENS: 'first-token-0123456789' },
      'Invalid configuration: DATABASE_URL must be a postgres:// or postgresql:// URL.',
    ],
    [
      { DATABASE_URL: 'postgres://db/plants' },
      'Invalid configuration: PLANT_API_TOKENS (or PLANT_API_JWKS_URL) is required with DATABASE_URL, so that every replica accepts the same tokens.',
    ],
    [{ PLANT_DB_POOL_SIZE: '0' }, 'Invalid configuration: PLANT_DB_POOL_SIZE must be a whole number from 1 to 1000.'],
    [
      { PLANT_DB_CONNECT_TIMEOUT_MS: '5s' },
      'Invalid configuration: PLANT_DB_CONNECT_TIMEOUT_MS must be a whole number of milliseconds from 1 to 3600000.',
    ],
    [{ PLANT_DB_STATEMENT_TIMEOUT_MS: '-1' }, /^Invalid configuration: PLANT_DB_STATEMENT_TIMEOUT_MS must be a whole/],
    [{ PLANT_DB_DEADLINE_MS: '0' }, /^Invalid configuration: PLANT_DB_DEADLINE_MS must be a whole/],
    [{ PLANT_SHUTDOWN_GRACE_MS: '1.5' }, /^Invalid configuration: PLANT_SHUTDOWN_GRACE_MS must be a whole number/],
    [{ PLANT_SHUTDOWN_DRAIN_MS: '-1' }, /^Invalid configuration: PLANT_SHUTDOWN_DRAIN_MS must be a whole number/],
    [{ PLANT_DB_MIGRATE: 'no' }, 'Invalid configuration: PLANT_DB_MIGRATE must be true or false.'],
    [{ PLANT_MAX_ACTIVE: '-1' }, 'Invalid configuration: PLANT_MAX_ACTIVE must be a whole number from 0 to 1000000.'],
    [
      { PLANT_MAX_IN_FLIGHT: '0' },
      'Invalid configuration: PLANT_MAX_IN_FLIGHT must be a whole number from 1 to 1000000.',
    ],
    [{ PLANT_MAX_CONNECTIONS: 'many' }, /^Invalid configuration: PLANT_MAX_CONNECTIONS must be a whole number from 1 /],
    [
      { PLANT_MAX_EVENT_LOOP_DELAY_MS: '-5' },
      'Invalid configuration: PLANT_MAX_EVENT_LOOP_DELAY_MS must be a whole number of milliseconds from 0 to 60000.',
    ],
    [
      { PLANT_MAX_ANSWER_BYTES: '0' },
      'Invalid configuration: PLANT_MAX_ANSWER_BYTES must be a whole number of bytes from 1 to 8589934592.',
    ],
    [{ PLANT_HTTP_KEEP_ALIVE_TIMEOUT_MS: 'x' }, /^Invalid configuration: PLANT_HTTP_KEEP_ALIVE_TIMEOUT_MS /],
    [{ PLANT_WEBHOOK_TIMEOUT_MS: '0' }, /^Invalid configuration: PLANT_WEBHOOK_TIMEOUT_MS must be a whole number/],
    [
      { PLANT_LOG_BUFFER_BYTES: '1024' },
      /^Invalid configuration: PLANT_LOG_BUFFER_BYTES must be a whole number of bytes from 16384/,
    ],
    [
      { PLANT_API_JWKS_MAX_STALE_MS: '0' },
      /^Invalid configuration: PLANT_API_JWKS_MAX_STALE_MS must be a whole number/,
    ],
    [
      { PLANT_WEBHOOK_DNS_TIMEOUT_MS: '60001' },
      /^Invalid configuration: PLANT_WEBHOOK_DNS_TIMEOUT_MS must be a whole number/,
    ],
    [
      { PLANT_WEBHOOK_RETENTION_MS: '30d' },
      'Invalid configuration: PLANT_WEBHOOK_RETENTION_MS must be a whole number of milliseconds from 1 to 315360000000 (3650 days).',
    ],
    [
      { PLANT_WEBHOOK_DISABLE_AFTER_MS: '0' },
      'Invalid configuration: PLANT_WEBHOOK_DISABLE_AFTER_MS must be a whole number of milliseconds from 1 to 31536000000 (365 days).',
    ],
    [
      { PLANT_WEBHOOK_RETRY_DELAYS_MS: '5000,5m' },
      /^Invalid configuration: PLANT_WEBHOOK_RETRY_DELAYS_MS must be a comma-separated list of 1 to 20 whole numbers/,
    ],
    [{ PLANT_WEBHOOK_RETRY_DELAYS_MS: '1,,2' }, /^Invalid configuration: PLANT_WEBHOOK_RETRY_DELAYS_MS /],
    [
      { PLANT_WEBHOOK_ROTATION_GRACE_MS: '2592000001' },
      /^Invalid configuration: PLANT_WEBHOOK_ROTATION_GRACE_MS must be a whole number of milliseconds from 0 to 2592000000/,
    ],
    [{ PLANT_WEBHOOK_WORKER: 'true' }, 'Invalid configuration: PLANT_WEBHOOK_WORKER must be on or off.'],
    [{ PLANT_WEBHOOK_DELIVERY: 'off' }, 'Invalid configuration: PLANT_WEBHOOK_DELIVERY must be true or false.'],
    [
      { PLANT_WEBHOOK_DELIVERY: 'true', PLANT_WEBHOOK_WORKER: 'off' },
      'Invalid configuration: PLANT_WEBHOOK_DELIVERY disagrees with the deprecated PLANT_WEBHOOK_WORKER; set PLANT_WEBHOOK_DELIVERY alone.',
    ],
    [
      { PLANT_WEBHOOKS_ALLOW_PRIVATE: 'yes' },
      'Invalid configuration: PLANT_WEBHOOKS_ALLOW_PRIVATE must be true or false.',
    ],
    [
      { PLANT_HTTP_HEADERS_TIMEOUT_MS: '40000' },
      'Invalid configuration: PLANT_HTTP_HEADERS_TIMEOUT_MS must not exceed PLANT_HTTP_REQUEST_TIMEOUT_MS.',
    ],
  ])('rejects %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('runs the webhook worker role on PostgreSQL without API tokens, and refuses it on the embedded store', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db/plants' }, 'worker').database?.url).toBe('postgres://db/plants');
    expect(() => loadConfig({}, 'worker')).toThrow(
      'Invalid configuration: DATABASE_URL is required by the webhook worker (dist/worker.js); the embedded SQLite store is held by one process, which delivers itself with PLANT_WEBHOOK_DELIVERY=true.',
    );
  });

  it('never echoes a rejected database URL, which may carry a password', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres//user:hunter2@db/plants' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('hunter2') }),
    );
  });

  it('never echoes a rejected token', () => {
    expect(() => loadConfig({ PLANT_API_TOKENS: 'secret value' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });

  describe('at the edges of each value', () => {
    const KEY = Buffer.alloc(32, 7).toString('base64');
    const JWT = {
      PLANT_API_JWKS_URL: 'https://issuer.example.com/jwks',
      PLANT_API_JWT_ISSUER: 'https://issuer.example.com/',
      PLANT_API_JWT_AUDIENCE: 'plants',
    };
    const DAY_MS = 86_400_000;

    it.each([
      [{ PORT: '65535' }, { port: 65535 }],
      [{ PLANT_API_TOKENS: 'a'.repeat(16) }, { apiTokens: [{ token: 'a'.repeat(16) }] }],
      [{ PLANT_RATE_LIMIT_PER_TOKEN: '1.25' }, { rateLimitPerToken: 1.25 }],
      [{ PLANT_DB_POOL_SIZE: '1000', DATABASE_URL: 'postgres://db/p', PLANT_API_TOKENS: 'a'.repeat(16) }, {}],
      [{ PLANT_WEBHOOK_RETENTION_MS: '1' }, { webhooks: expect.objectContaining({ retentionMs: 1 }) }],
      [
        { PLANT_WEBHOOK_RETENTION_MS: String(3650 * DAY_MS) },
        { webhooks: expect.objectContaining({ retentionMs: 3650 * DAY_MS }) },
      ],
      [
        { PLANT_WEBHOOK_RETRY_DELAYS_MS: Array(20).fill('604800000').join(',') },
        { webhooks: expect.objectContaining({ retryDelaysMs: Array(20).fill(604_800_000) }) },
      ],
      [{ PLANT_HTTP_HEADERS_TIMEOUT_MS: '30000' }, { server: expect.objectContaining({ headersTimeoutMs: 30_000 }) }],
      [{ PORT: '0', PLANT_METRICS_PORT: '0' }, { metrics: { port: 0, host: '127.0.0.1' } }],
      [{ PLANT_METRICS_PORT: '3000', PLANT_METRICS_HOST: '0.0.0.0' }, { metrics: { port: 3000, host: '0.0.0.0' } }],
      [{ ...JWT, DATABASE_URL: 'postgres://db/p' }, { apiTokens: [] }],
      [{ ...JWT, PLANT_API_JWKS_URL: 'http://127.10.200.3/jwks' }, {}],
      [
        { ...JWT, PLANT_API_JWT_ALGORITHMS: 'RS256,RS384,RS512,PS256,PS384,PS512,ES256,ES384,ES512,EdDSA' },
        { jwt: expect.objectContaining({ algorithms: expect.arrayContaining(['RS384', 'PS512', 'ES512']) }) },
      ],
      [{ PLANT_TRUST_PROXY: ' loopback ' }, { trustProxy: loadConfig({ PLANT_TRUST_PROXY: 'loopback' }).trustProxy }],
      [
        { PLANT_WEBHOOK_SECRETS_KEY: ` ${KEY}\n` },
        { webhooks: expect.objectContaining({ secretsKey: Buffer.alloc(32, 7) }) },
      ],
      [
        { PLANT_WEBHOOK_SECRETS_KEY: KEY.replace(/=+$/, '') },
        { webhooks: expect.objectContaining({ secretsKey: Buffer.alloc(32, 7) }) },
      ],
      ...['fatal', 'error', 'warn', 'debug', 'trace', 'silent'].map((level): [NodeJS.ProcessEnv, object] => [
        { LOG_LEVEL: level },
        { logLevel: level },
      ]),
    ] as [NodeJS.ProcessEnv, object][])('accepts %o', (env, expected) => {
      expect(loadConfig(env)).toMatchObject(expected);
    });

    it.each([
      ['PORT', { PORT: '1e3' }],
      ['PLANT_API_TOKENS', { PLANT_API_TOKENS: '!!!!abcdefghijklmnop' }],
      ['PLANT_API_TOKENS', { PLANT_API_TOKENS: 'abcdefghijklmnop!!!!' }],
      ['PLANT_API_TOKENS', { PLANT_API_TOKENS: `a${'b'.repeat(16)},short` }],
      ['PLANT_API_TOKENS', { PLANT_API_TOKENS: `xsha256:${'0'.repeat(64)}` }],
      ['PLANT_API_TOKENS', { PLANT_API_TOKENS: `sha256:${'0'.repeat(65)}` }],
      ['PLANT_RATE_LIMIT_PER_TOKEN', { PLANT_RATE_LIMIT_PER_TOKEN: '5x' }],
      ['PLANT_WEBHOOK_RETENTION_MS', { PLANT_WEBHOOK_RETENTION_MS: '1e3' }],
      ['PLANT_WEBHOOK_RETENTION_MS', { PLANT_WEBHOOK_RETENTION_MS: String(3650 * DAY_MS + 1) }],
      ['PLANT_WEBHOOK_RETRY_DELAYS_MS', { PLANT_WEBHOOK_RETRY_DELAYS_MS: Array(21).fill('1000').join(',') }],
      ['PLANT_WEBHOOK_RETRY_DELAYS_MS', { PLANT_WEBHOOK_RETRY_DELAYS_MS: '1000,604800001' }],
      ['PLANT_WEBHOOK_RETRY_DELAYS_MS', { PLANT_WEBHOOK_RETRY_DELAYS_MS: '1000,1e3' }],
      ['PLANT_API_JWKS_URL', { ...JWT, PLANT_API_JWKS_URL: 'http://127.0.0.1.evil.test/jwks' }],
      ['PLANT_API_JWKS_URL', { ...JWT, PLANT_API_JWKS_URL: 'http://x127.0.0.1/jwks' }],
      ['PLANT_API_JWKS_URL', { ...JWT, PLANT_API_JWKS_URL: 'ftp://localhost/jwks' }],
      ['PLANT_API_JWT_ALGORITHMS', { ...JWT, PLANT_API_JWT_ALGORITHMS: 'RS256,HS256' }],
      ['DATABASE_URL', { DATABASE_URL: 'xpostgres://db/plants', PLANT_API_TOKENS: 'a'.repeat(16) }],
      ['PLANT_WEBHOOK_SECRETS_KEY', { PLANT_WEBHOOK_SECRETS_KEY: `!${KEY}` }],
      ['PLANT_WEBHOOK_SECRETS_KEY', { PLANT_WEBHOOK_SECRETS_KEY: `${KEY}!` }],
    ])('rejects a bad %s, naming it', (variable, env) => {
      expect(() => loadConfig(env)).toThrow(
        expect.objectContaining({
          name: 'ConfigError',
          message: expect.stringMatching(`^Invalid configuration: ${variable} `),
        }),
      );
    });

    it('names what an algorithm list may hold, and what a JWKS URL must be', () => {
      expect(() => loadConfig({ ...JWT, PLANT_API_JWT_ALGORITHMS: 'none' })).toThrow(
        'Invalid configuration: PLANT_API_JWT_ALGORITHMS must be a comma-separated list of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA (never none or a shared-secret HS algorithm).',
      );
      expect(() => loadConfig({ ...JWT, PLANT_API_JWKS_URL: 'not a url' })).toThrow(
        'Invalid configuration: PLANT_API_JWKS_URL must be an https URL.',
      );
    });
  });

  it('reads the PostgreSQL settings alone for the migrate command, which needs DATABASE_URL', () => {
    expect(loadDatabaseConfig({ DATABASE_URL: 'postgres://db/plants', PLANT_DB_MIGRATE: 'false' })).toMatchObject({
      url: 'postgres://db/plants',
      migrate: false,
    });
    expect(() => loadDatabaseConfig({})).toThrow('Invalid configuration: DATABASE_URL is required.');
  });
});
