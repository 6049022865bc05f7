import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createApp } from './app.ts';
import { resolveApiTokens } from './auth/api-tokens.ts';
import { type Authenticator, combineAuthenticators, staticTokens } from './auth/authenticator.ts';
import { jwtAuthenticator } from './auth/jwt-authenticator.ts';
import { ConfigError, loadConfig } from './config.ts';
import { answerClientErrors } from './http/client-errors.ts';
import { DataDirInUseError, SqlitePlantStore } from './store/sqlite-store.ts';

/** How long in-flight requests may take to finish after SIGTERM/SIGINT. */
const SHUTDOWN_GRACE_MS = 10_000;

const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};

const startupErrors = [ConfigError, DataDirInUseError];

const start = () => {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.logLevel });
  const store = SqlitePlantStore.open(config.dataDir);
  // With only JWTs configured there is no static token to generate: the service is not open.
  const tokens =
    config.jwt && config.apiTokens.length === 0 ? undefined : resolveApiTokens(config.apiTokens, config.dataDir);
  const authenticators: { tokens?: Authenticator; jwt?: Authenticator } = {};
  if (tokens) authenticators.tokens = staticTokens(tokens.hashes);
  if (config.jwt) authenticators.jwt = jwtAuthenticator(config.jwt);
  const app = createApp({
    store,
    authenticate: combineAuthenticators(authenticators),
    rateLimitPerToken: config.rateLimitPerToken,
    authFailuresPerMinute: config.authFailuresPerMinute,
    requireScopes: config.requireScopes,
    logger,
  });

  const server = app.listen(config.port, config.host);
  answerClientErrors(server);
  server.on('error', (error: NodeJS.ErrnoException) => {
    fail(`Cannot listen on ${config.host}:${config.port}: ${error.code ?? error.message}.`);
  });
  server.on('listening', () => {
    const { port } = server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${host}:${port}`;
    logger.info({ url, dataDir: config.dataDir }, 'plant store listening');
    if (tokens?.generatedToken !== undefined) {
      console.log(
        [
          '',
          'No PLANT_API_TOKENS set, so an API token was generated. It is shown only this once;',
          `only its SHA-256 is kept, in ${tokens.hashFile}:`,
          '',
          `  ${tokens.generatedToken}`,
          '',
          'Try it:',
          '',
          `  curl -i -X POST ${url}/plants -H 'Authorization: Bearer ${tokens.generatedToken}' -H 'Content-Type: application/json' -d '{"id": 1, "name": "Monstera", "tag": "indoor"}'`,
          '',
        ].join('\n'),
      );
    } else if (tokens?.hashFile !== undefined) {
      logger.info(
        { hashFile: tokens.hashFile },
        'accepting the token generated on first start; set PLANT_API_TOKENS to choose tokens, or delete the file for a new one',
      );
    }
  });

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(
      () => fail('Shutdown grace period elapsed; exiting with requests still open.'),
      SHUTDOWN_GRACE_MS,
    ).unref();
    server.close(async () => {
      await store.close();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
};

try {
  start();
} catch (error) {
  if (startupErrors.some((type) => error instanceof type)) fail((error as Error).message);
  throw error;
}
