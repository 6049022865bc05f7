import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectOutput } from './child-output.ts';
import { SOURCE_NODE_FLAGS } from './source-node-flags.ts';

const MAIN = join(import.meta.dirname, '../../src/main.ts');
const WORKER = join(import.meta.dirname, '../../src/worker.ts');
/**
 * Safety nets, not speed bounds: a start or an exit takes a second on a quiet machine, and more
 * than 15 s at a load of 20 on two cores (pnpm test:stress).
 */
const START_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 60_000;

export const MAIN_TEST_TOKEN = 'main-process-test-token-0123456789';

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

export type MainProcess = {
  readonly child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` on stdout; rejects if the process exits first or time runs out. */
  waitForStdout(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(timeoutMs?: number): Promise<Exit>;
};

export type RunningMain = MainProcess & { url: string };

const children = new Set<ChildProcessWithoutNullStreams>();

const isRunning = (child: ChildProcessWithoutNullStreams): boolean =>
  child.exitCode === null && child.signalCode === null;

/** Kills every process started here that still runs; for afterEach/afterAll, so nothing outlives a test. */
export const killAllMains = async (): Promise<void> => {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          children.delete(child);
          if (!isRunning(child)) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
};

const withTimeout = <T>(promise: Promise<T>, timeoutMs: number, describe: () => string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${describe()}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};

/**
 * Runs `node src/main.ts` with only the given configuration (none of the runner's own), on
 * 127.0.0.1 and an ephemeral port unless told otherwise.
 */
export const runMain = (env: Record<string, string>): MainProcess => runEntry(MAIN, env);

/** runMain for the webhook worker's entry, `node src/worker.ts`. */
export const runWorker = (env: Record<string, string>): MainProcess => runEntry(WORKER, env);

const runEntry = (entry: string, env: Record<string, string>): MainProcess => {
  const baseEnv: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[name]) baseEnv[name] = process.env[name];
  const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, entry], {
    cwd: tmpdir(),
    // No drain window unless a test asks for one: the others would only wait for it at every stop.
    env: { ...baseEnv, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', PLANT_SHUTDOWN_DRAIN_MS: '0', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  const { stdout, stderr } = collectOutput(child);
  const exit = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const output = () => `\nstdout: ${stdout().slice(-4_000)}\nstderr: ${stderr().slice(-4_000)}`;

  return {
    child,
    stdout,
    stderr,
    waitForStdout: (pattern, timeoutMs = START_TIMEOUT_MS) =>
      withTimeout(
        new Promise<RegExpMatchArray>((resolve, reject) => {
          const check = () => {
            const match = stdout().match(pattern);
            if (match === null) return false;
            child.stdout.off('data', check);
            resolve(match);
            return true;
          };
          if (check()) return;
          child.stdout.on('data', check);
          void exit.then(() => {
            if (!check()) reject(new Error(`The process exited before printing ${pattern}.${output()}`));
          });
        }),
        timeoutMs,
        () => `${pattern} on stdout.${output()}`,
      ),
    exited: (timeoutMs = EXIT_TIMEOUT_MS) => withTimeout(exit, timeoutMs, () => `the process to exit.${output()}`),
  };
};

export type LogLine = { msg?: string; url?: string; level?: number; [key: string]: unknown };

export const logLines = (stdout: string): LogLine[] =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);

/** Starts main and resolves once it logs its URL. */
export const startMain = (env: Record<string, string>): Promise<RunningMain> =>
  started(runMain(env), 'plant store listening');

/** startMain for a built entry (`<dir>/main.js`, see scripts/build.ts) instead of the source. */
export const startBuiltMain = (entry: string, env: Record<string, string>): Promise<RunningMain> =>
  started(runEntry(entry, env), 'plant store listening');

/** startWorker for a built entry (`<dir>/worker.js`). */
export const startBuiltWorker = (entry: string, env: Record<string, string>): Promise<RunningMain> =>
  started(runEntry(entry, env), 'webhook worker listening');

/** Starts a webhook worker process and resolves once it logs the URL of its probes and metrics. */
export const startWorker = (env: Record<string, string>): Promise<RunningMain> =>
  started(runWorker(env), 'webhook worker listening');

const started = async (server: MainProcess, message: string): Promise<RunningMain> => {
  await server.waitForStdout(new RegExp(`"msg":"${message}"`));
  const url = logLines(server.stdout()).find((line) => line.msg === message)?.url;
  if (url === undefined || !/^http:\/\/127\.0\.0\.1:\d+$/.test(url)) {
    throw new Error(`Unexpected listening line: ${server.stdout()}`);
  }
  return { ...server, url };
};
