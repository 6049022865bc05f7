import { z } from 'zod';

const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MIN_TOKEN_LENGTH = 16;

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
        (tokens) => tokens.every((token) => B64_TOKEN.test(token) && token.length >= MIN_TOKEN_LENGTH),
        `must be a comma-separated list of tokens, each at least ${MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (then = padding)`,
      )
      .optional(),
  ),
  PLANT_DATA_DIR: optional(z.string().default('./data')),
  LOG_LEVEL: optional(
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        errorMap: () => ({ message: 'must be one of fatal, error, warn, info, debug, trace, silent' }),
      })
      .default('info'),
  ),
});

export type Config = {
  port: number;
  host: string;
  apiTokens: string[];
  dataDir: string;
  logLevel: string;
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
  const { PORT, HOST, PLANT_API_TOKENS, PLANT_DATA_DIR, LOG_LEVEL } = result.data;
  return { port: PORT, host: HOST, apiTokens: PLANT_API_TOKENS ?? [], dataDir: PLANT_DATA_DIR, logLevel: LOG_LEVEL };
};
