/**
 * What the two process roles share from start to exit: the API service (main.ts, service.ts) and
 * the delivery process (worker.ts, worker-service.ts). Loading the configuration and tracing, the
 * one-line exit on a start-up failure, the fatal-error exit, the exit when the embedded store gives
 * up, and the shutdown on SIGTERM/SIGINT in one order: the role's own drain and stop, then tracing,
 * then `stopped` and exit 0. Nothing here loads what tracing instruments (express, pg, pino): the
 * entries load it before tracing starts.
 */
import type { Logger } from 'pino';
import { type Config, ConfigError, loadConfig, type Role } from './config.ts';
import type { Tracing } from './ops/tracing-hooks.ts';
import type { SqlitePlantStore } from './store/sqlite/sqlite-store.ts';

/** Ends the process with one line on stderr and a non-zero status, for its supervisor to see. */
export const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};

/** Logs `what` happened at fatal, with the error, and ends the process: `Stopped: <stopped>; see the log.` */
export const failFatally = (logger: Logger, error: unknown, what: string, stopped = what): never => {
  logger.fatal({ err: error }, what);
  return fail(`Stopped: ${stopped}; see the log.`);
};

type ErrorType = abstract new (...args: never[]) => Error;

/**
 * An entry's start-up: reads the configuration for `role`, starts tracing when the OTEL_ variables
 * ask for it (before `start` loads the modules it instruments), and runs `start`. A failure of one
 * of `startupErrors` (or a bad configuration) ends the process with its message alone.
 */
export const startProcess = async (
  role: Role,
  startupErrors: ErrorType[],
  start: (config: Config, tracing: Tracing | undefined) => Promise<void>,
): Promise<void> => {
  try {
    const config = loadConfig(process.env, role);
    const tracing = config.tracing
      ? await (await import('./ops/tracing.ts')).startTracing({ instrument: true })
      : undefined;
    await start(config, tracing);
  } catch (error) {
    if (![ConfigError, ...startupErrors].some((type) => error instanceof type)) throw error;
    fail((error as Error).message);
  }
};

/**
 * The embedded store restarts its SQLite thread when it stops (an out-of-memory error, for one);
 * when it gives up, the process exits non-zero so that its supervisor starts it afresh.
 */
export const exitWhenStoreGivesUp = (store: SqlitePlantStore, logger: Logger): void => {
  store.onEvent((event) => {
    if (event.kind === 'stopped') logger.error({ err: event.error }, 'the embedded database stopped; restarting it');
    else if (event.kind === 'restarted') logger.info('the embedded database is serving again');
    else failFatally(logger, event.error, 'the embedded database could not be restarted');
  });
};

export type Shutdown = {
  /** True from the first signal on: readiness fails. */
  isStopping(): boolean;
  /**
   * Handles SIGTERM and SIGINT from now on. The first runs `stop` (the role's drain, then its work,
   * listeners and store closed in that order), then tracing's last spans leave, `stopped` is logged
   * and the process exits 0. A signal during `stop` runs `again`.
   */
  onSignals(handlers: { stop(signal: NodeJS.Signals): Promise<void>; again(): void }): void;
};

export const createShutdown = (logger: Logger, tracing: Tracing | undefined): Shutdown => {
  let stopping = false;
  return {
    isStopping: () => stopping,
    onSignals: ({ stop, again }) => {
      const shutdown = async (signal: NodeJS.Signals) => {
        if (stopping) return again();
        stopping = true;
        await stop(signal);
        await tracing?.shutdown();
        logger.info('stopped');
        process.exit(0);
      };
      process.on('SIGTERM', (signal) => void shutdown(signal));
      process.on('SIGINT', (signal) => void shutdown(signal));
    },
  };
};
