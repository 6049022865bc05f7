import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';

/** How to start one server under test as its own process. */
export type ServerCommand = {
  /** Arguments to `node` (script first); node flags may precede it. */
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
};

export type RunningServer = {
  url: string;
  pid: number;
  /** Peak resident set size so far (VmHWM), in bytes. */
  peakRss(): number;
  /** Lines the server wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
};

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** `{"msg": "… listening", "url": …}`: the line every server here logs once it accepts requests. */
export const listeningUrl = (text: string): string | undefined => {
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: unknown; url?: unknown };
      if (typeof entry.msg === 'string' && entry.msg.includes('listening') && typeof entry.url === 'string') {
        return entry.url;
      }
    } catch {
      // Not a log line.
    }
  }
  return undefined;
};

/** VmHWM of a live process, from /proc (Linux). */
export const readPeakRss = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`No VmHWM in /proc/${pid}/status`);
  return Number(kib) * 1024;
};

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Servers still running: killed if this process exits early, so that none outlives a failed run. */
const running = new Set<ChildProcess>();
let exitHook = false;

const track = (child: ChildProcess): ChildProcess => {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const server of running) server.kill('SIGKILL');
    });
    // Without handlers, a signal would end this process without 'exit' and leave the servers behind.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.once(signal, () => process.exit(128 + (signal === 'SIGINT' ? 2 : signal === 'SIGTERM' ? 15 : 1)));
    }
  }
  return child;
};

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));

const stopChild = async (child: ChildProcess): Promise<void> => {
  const done = exited(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await done;
  clearTimeout(timer);
};

/**
 * Starts a server whose output goes to `logFile` (a file, as in production, so that reading logs
 * costs the benchmark nothing) and resolves once it logs that it listens.
 */
export const startServer = async (
  command: ServerCommand,
  logFile: string,
  /** A program that runs node (`['valgrind', …flags]`), and how long it may take to listen. */
  { wrapper = [], startTimeoutMs = START_TIMEOUT_MS }: { wrapper?: string[]; startTimeoutMs?: number } = {},
): Promise<RunningServer> => {
  const fd = openSync(logFile, 'w');
  const [program = process.execPath, ...args] = [...wrapper, process.execPath, ...command.args];
  const child = track(spawn(program, args, { cwd: command.cwd, env: command.env, stdio: ['ignore', fd, fd] }));
  closeSync(fd);
  const pid = child.pid as number;
  const output = () => readFileSync(logFile, 'utf8').slice(-4000);
  const deadline = Date.now() + startTimeoutMs;
  let url: string | undefined;
  while (url === undefined) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${command.args.join(' ')} exited before listening:\n${output()}`);
    }
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`${command.args.join(' ')} did not listen within ${startTimeoutMs} ms:\n${output()}`);
    }
    await delay(10);
    url = listeningUrl(readFileSync(logFile, 'utf8'));
  }
  return { url, pid, peakRss: () => readPeakRss(pid), output, stop: () => stopChild(child) };
};

export type PostResult = { status: number; body: string };

/** One POST with a fresh connection: nothing pooled, nothing warmed up in this process. */
export const post = (url: string, headers: Record<string, string>, body: string): Promise<PostResult> =>
  new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

/**
 * Milliseconds from spawn to the first 200 answer of a POST /plants: process start, module
 * loading, store opening and migrations, listening, and the first request's cold path.
 */
export const measureColdStart = async (
  command: ServerCommand,
  plantRequest: { headers: Record<string, string>; body: string },
): Promise<number> => {
  const started = performance.now();
  const child = track(
    spawn(process.execPath, command.args, { cwd: command.cwd, env: command.env, stdio: ['ignore', 'pipe', 'pipe'] }),
  );
  let text = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no listening line within ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
      const onData = (chunk: string) => {
        text += chunk;
        const found = listeningUrl(text);
        if (found !== undefined) {
          clearTimeout(timer);
          resolve(found);
        }
      };
      child.stdout?.setEncoding('utf8').on('data', onData);
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code} before listening`));
      });
    });
    for (;;) {
      const answer = await post(`${url}/plants`, plantRequest.headers, plantRequest.body);
      if (answer.status === 200) return performance.now() - started;
      if (answer.status !== 503) throw new Error(`first POST /plants answered ${answer.status}: ${answer.body}`);
      await delay(1);
    }
  } catch (error) {
    throw new Error(
      `Cold start of ${command.args.join(' ')} failed: ${(error as Error).message}\n${text.slice(-4000)}`,
    );
  } finally {
    await stopChild(child);
  }
};
