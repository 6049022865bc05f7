import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { collectOutput } from '@org/plant-api/testing/child-output';

const SCRIPT = fileURLToPath(new URL('./post-plants.lua', import.meta.url));

export type WrkResult = {
  requests: number;
  durationUs: number;
  bytes: number;
  /** Answers other than 2xx/3xx (401, 409, 429, 5xx…): any of them spoils the round. */
  non2xx: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
  meanUs: number;
};

const hasWrk = (): boolean => spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;

/**
 * wrk (C, epoll) rather than a Node load generator: it shares the machine's two cores with the
 * server under test, so the less CPU it takes per request the less it distorts the figures.
 * Installed from Debian's packages when missing and we may.
 */
export const ensureWrk = (): void => {
  if (hasWrk()) return;
  const canApt = process.getuid?.() === 0 && spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!canApt) {
    throw new Error('wrk is not installed: install it (apt-get install wrk, brew install wrk) and run again.');
  }
  console.log('wrk is not installed; installing the Debian package wrk…');
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('apt-get', ['install', '-y', '-qq', 'wrk'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (!hasWrk()) throw new Error('wrk is still missing after apt-get install wrk.');
};

export type WrkOptions = {
  url: string;
  token: string;
  connections: number;
  threads: number;
  seconds: number;
  /** Ids sent are firstId, firstId+1, …: unique per run so that every POST creates a new plant. */
  firstId: number;
  /** Seconds a request may wait for its answer before wrk counts a timeout (default 5). */
  timeoutSeconds?: number;
};

/**
 * A command prefix that raises the open-file limit to `files` (an unprivileged process may raise
 * it up to the hard limit) and then runs the program after it: loads of thousands of connections
 * need a descriptor each, on both sides.
 */
export const fileLimitWrapper = (files: number): string[] => [
  '/bin/sh',
  '-c',
  `ulimit -n ${files} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"`,
];

/** One wrk run of POST /plants in its own process. */
export const runWrk = ({
  url,
  token,
  connections,
  threads,
  seconds,
  firstId,
  timeoutSeconds = 5,
}: WrkOptions): Promise<WrkResult> =>
  new Promise((resolve, reject) => {
    const args = [
      `-t${threads}`,
      `-c${connections}`,
      `-d${seconds}s`,
      '--timeout',
      `${timeoutSeconds}s`,
      '-s',
      SCRIPT,
      `${url}/plants`,
      '--',
      token,
      String(firstId),
      String(threads),
    ];
    // One descriptor per connection, and some to spare.
    const [program, ...programArgs] = [...fileLimitWrapper(connections + 1_000), 'wrk', ...args];
    const child = spawn(program as string, programArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collectOutput(child);
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = output
        .stdout()
        .trim()
        .split('\n')
        .findLast((text) => text.startsWith('{'));
      if (code !== 0 || line === undefined) {
        reject(new Error(`wrk ${args.join(' ')} failed (exit ${code}):\n${output.stdout()}${output.stderr()}`));
        return;
      }
      resolve(JSON.parse(line) as WrkResult);
    });
  });
