import { z } from 'zod';

const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MIN_TOKEN_LENGTH = 16;
/** A token given by its SHA-256, so that no plaintext token sits in the configuration. */
export const SHA256_ENTRY = /^sha256:[0-9a-f]{64}$/i;

const rate = (fallback: string) =>
  optional(
    z
      .string()
      .regex(/^\d+(\.\d+)?$/, 'must be a non-negative number (0 turns the limit off)')
      .transform(Number)
      .default(fallback),
  );

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

// An empty variable counts as unset, as in most shells' `VAR= command`.
const optional = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema);

const Env = z.object({
  PORT: optional(
    z
      .string()
      .regex(/^\d{1,5}$/, 'must be a port number from 0 to 65535')
      .transform(Number)
      .refine((port) => port <= 65535, 'must be a port number from 0 to 65535')
      .default('3000'),
  ),
  HOST: optional(z.string().default('127.0.0.1')),
  PLANT_API_TOKENS: optional(
    z
      .string()
      .transform((list) =>
        list
          .split(',')
          .map((token) => token.trim())
          .filter((token) => token !== ''),
      )
      .refine(
        (tokens) =>
          tokens.every(
            (token) => SHA256_ENTRY.test(token) || (B64_TOKEN.test(token) && token.length >= MIN_TOKEN_LENGTH),
          ),
        `must be a comma-separated list of tokens, each at least ${MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (then = padding), or sha256:<64 hex digits> of one`,
      )
      .optional(),
  ),
  PLANT_DATA_DIR: optional(z.string().default('./data')),
  PLANT_RATE_LIMIT_PER_TOKEN: rate('1000'),
  PLANT_AUTH_FAILURES_PER_MINUTE: rate('60'),
  PLANT_API_JWKS_URL: optional(
    z
      .string()
      .url('must be an http(s) URL')
      .refine((url) => /^https?:\/\//.test(url), 'must be an http(s) URL')
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
      .default('RS256,ES256,EdDSA'),
  ),
  PLANT_API_JWT_REQUIRE_SCOPES: optional(
    z.enum(['true', 'false'], { errorMap: () => ({ message: 'must be true or false' }) }).default('false'),
  ),
  LOG_LEVEL: optional(
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        errorMap: () => ({ message: 'must be one of fatal, error, warn, info, debug, trace, silent' }),
      })
      .default('info'),
  ),
});

export type JwtConfig = { jwksUrl: string; issuer: string; audience: string; algorithms: string[] };

export type Config = {
  port: number;
  host: string;
  /** Plain tokens and `sha256:<hex>` entries. */
  apiTokens: string[];
  dataDir: string;
  logLevel: string;
  rateLimitPerToken: number;
  authFailuresPerMinute: number;
  jwt?: JwtConfig;
  requireScopes: boolean;
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Reads and validates the environment; a bad value throws one line naming the variable. */
export const loadConfig = (env: NodeJS.ProcessEnv): Config => {
  const result = Env.safeParse(env);
  if (!result.success) {
    const [issue] = result.error.issues;
    throw new ConfigError(`Invalid configuration: ${issue?.path.join('.')} ${issue?.message}.`);
  }
  const vars = result.data;
  const config: Config = {
    port: vars.PORT,
    host: vars.HOST,
    apiTokens: vars.PLANT_API_TOKENS ?? [],
    dataDir: vars.PLANT_DATA_DIR,
    logLevel: vars.LOG_LEVEL,
    rateLimitPerToken: vars.PLANT_RATE_LIMIT_PER_TOKEN,
    authFailuresPerMinute: vars.PLANT_AUTH_FAILURES_PER_MINUTE,
    requireScopes: vars.PLANT_API_JWT_REQUIRE_SCOPES === 'true',
  };
  if (vars.PLANT_API_JWKS_URL !== undefined) {
    for (const name of ['PLANT_API_JWT_ISSUER', 'PLANT_API_JWT_AUDIENCE'] as const) {
      if (!vars[name]) throw new ConfigError(`Invalid configuration: ${name} is required with PLANT_API_JWKS_URL.`);
    }
    config.jwt = {
      jwksUrl: vars.PLANT_API_JWKS_URL,
      issuer: vars.PLANT_API_JWT_ISSUER as string,
      audience: vars.PLANT_API_JWT_AUDIENCE as string,
      algorithms: vars.PLANT_API_JWT_ALGORITHMS,
    };
  } else if (config.requireScopes) {
    throw new ConfigError('Invalid configuration: PLANT_API_JWT_REQUIRE_SCOPES needs PLANT_API_JWKS_URL.');
  }
  return config;
};
