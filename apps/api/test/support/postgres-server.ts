import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

/**
 * A throwaway PostgreSQL server for tests, from the binaries installed on the machine: no
 * download, no manual set-up. PostgreSQL refuses to run as root, so a root test runner starts it
 * as the `postgres` user (or `nobody`) on a data directory owned by that user.
 */

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;
const SEARCHED_BIN_DIRS = '/usr/lib/postgresql/<version>/bin, /usr/local/pgsql/bin, or PLANT_TEST_POSTGRES_BIN';

export type PostgresBinaries = { binDir: string; version: number };

/** The newest PostgreSQL whose `initdb` and `postgres` are installed, or undefined. */
export const findPostgres = (): PostgresBinaries | undefined => {
  const candidates: PostgresBinaries[] = [];
  const configured = process.env.PLANT_TEST_POSTGRES_BIN;
  if (configured) candidates.push({ binDir: configured, version: Number.POSITIVE_INFINITY });
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    for (const entry of readdirSync(debianRoot)) {
      const version = Number(entry);
      if (Number.isFinite(version)) candidates.push({ binDir: join(debianRoot, entry, 'bin'), version });
    }
  }
  candidates.push({ binDir: '/usr/local/pgsql/bin', version: 0 });
  return candidates
    .filter(({ binDir }) => existsSync(join(binDir, 'initdb')) && existsSync(join(binDir, 'postgres')))
    .sort((a, b) => b.version - a.version)[0];
};

export const postgresMissingMessage = (): string =>
  `No PostgreSQL server binaries found (looked in ${SEARCHED_BIN_DIRS}); the PostgreSQL tests are skipped. ` +
  'Install them with `apt-get install postgresql` (or your system package manager) to run them.';

/** Root may not run PostgreSQL: the uid/gid to run it as instead, or undefined to run as ourselves. */
const serverUser = (): { uid: number; gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      if (uid > 0) return { uid, gid };
    } catch {
      // No such user; try the next.
    }
  }
  throw new Error('Running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as.');
};

/** Direct children of `pid` (Linux /proc; elsewhere none are found, and only the postmaster is signalled). */
const childrenOf = (pid: number): number[] => {
  if (!existsSync('/proc')) return [];
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so parse after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid) children.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return children;
};

/** Running, and not a zombie waiting to be reaped (a zombie holds no shared memory). */
const isAlive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    if (existsSync('/proc')) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
};

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type PostgresServerOptions = {
  /** fsync WAL and data (default true): what production does, so durability tests mean something. */
  fsync?: boolean;
  maxConnections?: number;
};

export type PostgresServer = {
  /** URL of the `postgres` maintenance database as the `postgres` superuser (trust auth). */
  readonly adminUrl: string;
  readonly port: number;
  /** Starts the server again on the same data directory and port, after stop or kill. */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT): the server rolls back open transactions and exits cleanly. */
  stop(): Promise<void>;
  /** SIGKILL to the postmaster and every backend at once, as an OOM killer or a lost host would. */
  kill(): Promise<void>;
  /** SIGSTOP/SIGCONT to every server process: reachable by TCP, answering nothing. */
  freeze(): void;
  thaw(): void;
  /** Stops the server (killing it if it will not stop) and removes its data directory. */
  destroy(): Promise<void>;
  /** The server's recent log output, for failure messages. */
  log(): string;
  /** The postmaster's process id while it runs: the bench reads the cluster's CPU time from /proc through it. */
  pid(): number | undefined;
};

/** Initialises a fresh cluster in a temporary directory and starts it on 127.0.0.1:<free port>. */
export const startPostgresServer = async ({
  fsync = true,
  maxConnections = 200,
}: PostgresServerOptions = {}): Promise<PostgresServer> => {
  const binaries = findPostgres();
  if (binaries === undefined) throw new Error(postgresMissingMessage());
  const user = serverUser();
  const root = mkdtempSync(join(tmpdir(), 'plant-postgres-'));
  const dataDir = join(root, 'data');
  if (user) chownSync(root, user.uid, user.gid);
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  // Should this process die without cleaning up (the test runner killed), the watchdog notices
  // within a second: an immediate shutdown of whichever postmaster runs, then the directory goes.
  const watchdog = spawn(
    '/bin/sh',
    [
      '-c',
      `while kill -0 "$1" 2>/dev/null; do sleep 1; done
pid=$(head -n 1 "$2/data/postmaster.pid" 2>/dev/null)
if [ -n "$pid" ]; then kill -QUIT "$pid" 2>/dev/null; sleep 3; kill -KILL "$pid" 2>/dev/null; fi
rm -rf "$2"`,
      'plant-postgres-watchdog',
      String(process.pid),
      root,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
  const removeAll = () => {
    if (watchdog.pid !== undefined) {
      try {
        process.kill(watchdog.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  let logText = '';
  const appendLog = (chunk: string) => {
    logText = (logText + chunk).slice(-20_000);
  };

  try {
    execFileSync(
      join(binaries.binDir, 'initdb'),
      ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale', '--no-sync', '--no-instructions'],
      { ...asUser, cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (error) {
    removeAll();
    throw new Error(`initdb failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? error}`);
  }

  let port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  // Each backend calls setsid(), so a process-group signal reaches the postmaster alone: the
  // cluster is the postmaster and its children, found through /proc.
  const clusterPids = (): number[] => {
    const postmaster = child?.pid;
    if (postmaster === undefined) return [];
    return [postmaster, ...childrenOf(postmaster)];
  };

  const signalCluster = (signal: NodeJS.Signals) => {
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    // The postmaster first, so that it forks nothing new while its children get the signal.
    for (const pid of clusterPids()) {
      try {
        process.kill(pid, signal);
      } catch {
        // Already gone.
      }
    }
  };
  // If this process dies without cleaning up (the test runner killed), take the server with it.
  const killOnExit = () => signalCluster('SIGKILL');

  const spawnServer = () => {
    const server = spawn(
      join(binaries.binDir, 'postgres'),
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        `fsync=${fsync ? 'on' : 'off'}`,
        '-c',
        'synchronous_commit=on',
        '-c',
        'shared_buffers=16MB',
        '-c',
        `max_connections=${maxConnections}`,
        '-c',
        'log_min_messages=warning',
        '-c',
        'log_min_error_statement=panic',
        '-c',
        'log_checkpoints=off',
      ],
      // Detached: a Ctrl-C in the terminal reaches the test runner alone, which then stops the server in order.
      {
        ...asUser,
        cwd: root,
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, LC_ALL: 'C' },
      },
    );
    server.stderr?.setEncoding('utf8').on('data', appendLog);
    exited = new Promise((resolve) => server.once('exit', () => resolve()));
    server.once('error', (error) => appendLog(`spawn error: ${error.message}\n`));
    child = server;
    process.once('exit', killOnExit);
  };

  const adminUrl = () => `postgres://postgres@127.0.0.1:${port}/postgres`;

  const waitUntilReady = async () => {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child?.exitCode !== null || child?.signalCode !== null) {
        throw new Error(`PostgreSQL exited while starting:\n${logText}`);
      }
      const client = new pg.Client({ connectionString: adminUrl(), connectionTimeoutMillis: 2_000 });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`PostgreSQL did not start within ${START_TIMEOUT_MS} ms: ${error}\n${logText}`);
      } finally {
        await client.end().catch(() => {});
      }
      await delay(50);
    }
  };

  const waitForExit = async (): Promise<void> => {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
    });
    if (await Promise.race([exited.then(() => false), timedOut])) {
      signalCluster('SIGKILL');
      await exited;
    }
    clearTimeout(timer);
    process.off('exit', killOnExit);
  };

  const start = async () => {
    for (let attempt = 1; ; attempt++) {
      spawnServer();
      try {
        await waitUntilReady();
        return;
      } catch (error) {
        signalCluster('SIGKILL');
        await waitForExit();
        // Another process may have taken the port between probing and binding it.
        if (attempt < 3 && /could not bind|Address already in use/.test(logText)) {
          port = await freePort();
          continue;
        }
        throw error;
      }
    }
  };

  const stop = async () => {
    signalCluster('SIGCONT');
    // SIGINT to the postmaster alone: a fast shutdown, which tells the backends itself.
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    await waitForExit();
  };

  const kill = async () => {
    const pids = clusterPids();
    signalCluster('SIGKILL');
    await waitForExit();
    // The new postmaster refuses to start while an old backend still holds the shared memory.
    const deadline = Date.now() + STOP_TIMEOUT_MS;
    while (pids.some(isAlive) && Date.now() < deadline) await delay(20);
  };

  try {
    await start();
  } catch (error) {
    removeAll();
    throw error;
  }

  return {
    get adminUrl() {
      return adminUrl();
    },
    get port() {
      return port;
    },
    start,
    stop,
    kill,
    freeze: () => signalCluster('SIGSTOP'),
    thaw: () => signalCluster('SIGCONT'),
    destroy: async () => {
      await stop();
      removeAll();
    },
    log: () => logText,
    pid: () => (child?.exitCode === null && child.signalCode === null ? child.pid : undefined),
  };
};

/** Replaces the database name of a postgres:// URL. */
export const withDatabase = (url: string, database: string): string => {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
};

export type TestDatabase = { url: string; name: string; drop(): Promise<void> };

/** A new empty database on the server at `adminUrl`; `drop` removes it, disconnecting any session. */
export const createTestDatabase = async (adminUrl: string, prefix = 'plant_test'): Promise<TestDatabase> => {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
};
