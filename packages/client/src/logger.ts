/** Where the client writes what it does: `console` by default, or pino, winston, … (as openai-node's). */
export type PlantLogger = {
  debug(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
};

/** The least severe level written; `off` writes nothing. */
export type PlantLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

const LEVELS: readonly PlantLogLevel[] = ['debug', 'info', 'warn', 'error', 'off'];

type Write = (message: string, details: Record<string, unknown>) => void;

/** One function per level, undefined below `level`: a call site pays nothing for a level that is off. */
export type Log = { debug?: Write; info?: Write; warn?: Write; error?: Write };

export const createLog = (logger: PlantLogger = console, level: PlantLogLevel = 'warn'): Log => {
  const least = LEVELS.indexOf(level);
  if (least < 0) throw new RangeError(`logLevel must be one of ${LEVELS.join(', ')}.`);
  const log: Log = {};
  for (const name of ['debug', 'info', 'warn', 'error'] as const) {
    if (LEVELS.indexOf(name) >= least) log[name] = (message, details) => logger[name](message, details);
  }
  return log;
};
