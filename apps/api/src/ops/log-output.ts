import type { Logger } from 'pino';
import { pino } from 'pino';
import { type Clock, systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import { CONFIG_DEFAULTS } from '../config-defaults.ts';

/** How often dropped lines are reported, when there were any. */
const REPORT_EVERY_MS = 10_000;

export type LogOutput = {
  /** pino's asynchronous destination on stdout (sonic-boom), its buffer bounded. */
  readonly stream: ReturnType<typeof pino.destination>;
  /** Lines dropped since start because the buffer was full. */
  dropped(): number;
  /** Writes a warning through `logger`, every `reportEveryMs`, when lines were dropped since the last. */
  reportDrops(logger: Logger, options?: { reportEveryMs?: number; clock?: Clock }): () => void;
};

/** Lines in what a write carried: pino writes one at a time, the delivery thread's come one by one too. */
const linesIn = (data: string | Buffer): number => {
  const text = String(data);
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
  return Math.max(1, lines);
};

/**
 * The service's log destination: asynchronous writes to stdout (`fd`), as before, with the lines
 * waiting for it bounded by `maxBufferBytes`. When stdout lags (a slow collector, a full pipe) and a
 * flood of failures is logged, the lines past the bound are dropped and counted, rather than held
 * in the heap until the process runs out of it.
 */
export const createLogOutput = ({
  fd = 1,
  maxBufferBytes = CONFIG_DEFAULTS.logBufferBytes,
}: {
  fd?: number;
  maxBufferBytes?: number;
} = {}): LogOutput => {
  const stream = pino.destination({ dest: fd, sync: false, maxLength: maxBufferBytes });
  let dropped = 0;
  stream.on('drop', (data: string | Buffer) => {
    dropped += linesIn(data);
  });
  return {
    stream,
    dropped: () => dropped,
    reportDrops: (logger, { reportEveryMs = REPORT_EVERY_MS, clock = systemClock } = {}) => {
      let reported = 0;
      let cancel = () => {};
      const check = () => {
        if (dropped > reported) {
          logger.warn(
            { droppedLines: dropped - reported, droppedSinceStart: dropped },
            'log lines dropped: the log output could not keep up',
          );
          reported = dropped;
        }
        cancel = clock.setTimeout(check, reportEveryMs, { keepAlive: false });
      };
      cancel = clock.setTimeout(check, reportEveryMs, { keepAlive: false });
      return () => cancel();
    },
  };
};

/**
 * A process role's logger. Asynchronous writes: a synchronous write per request line blocked the
 * event loop (profiled); lines written while a write is in flight go out together with the next,
 * and pino flushes at exit. The deprecated settings in use are said once, at start.
 */
export const createProcessLogger = (
  config: Pick<Config, 'logBufferBytes' | 'logLevel' | 'deprecations'>,
): { logger: Logger; output: LogOutput } => {
  const output = createLogOutput({ maxBufferBytes: config.logBufferBytes });
  const logger = pino({ level: config.logLevel }, output.stream);
  output.reportDrops(logger);
  for (const deprecation of config.deprecations) logger.warn(deprecation);
  return { logger, output };
};
