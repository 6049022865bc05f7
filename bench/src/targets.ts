import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { startReceiver } from './lean-receiver.ts';
import type { ServerKey } from './options.ts';
import type { Postgres } from './postgres.ts';
import { post, type ServerCommand } from './server-process.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const API_DIR = join(REPO_ROOT, 'apps', 'api');
/**
 * How the backend team starts the service: `pnpm start`'s own command line (the built bundle and
 * its Node flags), read from the package so that the benchmark cannot drift from it.
 */
const apiStartArgs = (): string[] => {
  const { scripts } = JSON.parse(readFileSync(join(API_DIR, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [program, ...args] = (scripts.start ?? '').trim().split(/\s+/);
  if (program !== 'node' || args.length === 0) {
    throw new Error(
      `apps/api's start script must be \`node [flags] <script>\` (got ${JSON.stringify(scripts.start)}).`,
    );
  }
  return args;
};
const API_MAIN = apiStartArgs();
/** The webhook worker role (`node dist/worker.js`) with the same Node flags as the service. */
export const API_WORKER = [...API_MAIN.slice(0, -1), 'dist/worker.js'];
/** The service's command line (its Node flags, then dist/main.js). */
export const API_SERVICE = API_MAIN;
const SERVERS_DIR = fileURLToPath(new URL('./servers/', import.meta.url));

/** Accepted by every server here (the API wants ≥ 16 characters of the b64token alphabet). */
export const BENCH_TOKEN = 'bench-token-0123456789abcdef';
export const BENCH_HEADERS = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
/** The body every benchmark sends, wrk's Lua script included. */
export const plantBody = (id: number): string => JSON.stringify({ id, name: 'Monstera deliciosa', tag: 'indoor' });

export const NAMES: Record<ServerKey, string> = {
  a: 'node:http + Map (limit)',
  b: 'ts-rest/express + zod + Map (peer)',
  c: 'our API, embedded SQLite',
  d: 'our API, PostgreSQL',
  e: 'our API, embedded SQLite, 1 webhook',
  g: 'ts-rest/express + pg Pool (PostgreSQL peer)',
};

/** One instance of a server: its command, on its own fresh data. */
export type Instance = {
  command: ServerCommand;
  /** Plants it stored durably (read after it stopped), or undefined when it keeps none. */
  storedPlants(): Promise<number | undefined>;
  /** Runs once the server listens, before any load (e.g. subscribing a webhook receiver). */
  prepare?(url: string): Promise<void>;
  /** Deliveries its webhook receiver got so far, for a server that announces plants. */
  delivered?(): number;
  cleanup(): Promise<void>;
};

export type Target = {
  key: ServerKey;
  name: string;
  /** A new instance with empty storage; `nodeFlags` go before the script (e.g. --cpu-prof). */
  instance(nodeFlags?: string[]): Promise<Instance>;
};

/** The inherited environment minus anything that would change how a server under test runs. */
const baseEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(PLANT_|DATABASE_URL$|LOG_LEVEL$|PORT$|HOST$|NODE_OPTIONS$|NODE_ENV$|BENCH_)/.test(name)) continue;
    env[name] = value;
  }
  return { ...env, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1' };
};

/** A target named as NAMES says. */
const target = (key: ServerKey, instance: Target['instance']): Target => ({ key, name: NAMES[key], instance });

const reference = (key: ServerKey, file: string): Target =>
  target(key, async (nodeFlags = []) => ({
    command: {
      args: [...nodeFlags, join(SERVERS_DIR, file)],
      cwd: REPO_ROOT,
      env: { ...baseEnv(), BENCH_TOKEN },
    },
    storedPlants: async () => undefined,
    cleanup: async () => {},
  }));

/** Our API with production settings: a fixed token, info logging, a data directory of its own. */
export const apiEnv = (dataDir: string): NodeJS.ProcessEnv => ({
  ...baseEnv(),
  PLANT_API_TOKENS: BENCH_TOKEN,
  PLANT_DATA_DIR: dataDir,
  LOG_LEVEL: 'info',
  // The per-token rate limit (default 1000/s) would answer this single-token load with 429s. Set
  // far above any rate reached here, the limiter still runs on every request, so its cost counts.
  PLANT_RATE_LIMIT_PER_TOKEN: '1000000000',
  // The bench stops a server only once its load is over: a drain window would only add its wait
  // to every stop (cold starts are measured many times over).
  PLANT_SHUTDOWN_DRAIN_MS: '0',
});

/** Our API as `pnpm start` runs it, on `dataDir`, with `env` over the production settings above. */
const ourApiCommand = (nodeFlags: string[], dataDir: string, env: NodeJS.ProcessEnv = {}): ServerCommand => ({
  args: [...nodeFlags, ...API_MAIN],
  cwd: API_DIR,
  env: { ...apiEnv(dataDir), ...env },
});

const removeDataDir = (dataDir: string): void => rmSync(dataDir, { recursive: true, force: true });

const countSqlitePlants = (dataDir: string): number | undefined => {
  const file = join(dataDir, 'plants.sqlite');
  if (!existsSync(file)) return undefined;
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number((db.prepare('SELECT count(*) AS count FROM plants').get() as { count: number }).count);
  } finally {
    db.close();
  }
};

const ourApiOnSqlite = target('c', async (nodeFlags = []) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plant-bench-sqlite-'));
  return {
    command: ourApiCommand(nodeFlags, dataDir),
    storedPlants: async () => countSqlitePlants(dataDir),
    cleanup: async () => removeDataDir(dataDir),
  };
});

/** (c) with one subscribed endpoint: every created plant is announced to a lean receiver (lean-receiver.ts). */
const ourApiWithWebhook = target('e', async (nodeFlags = []) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plant-bench-webhook-'));
  const receiver = await startReceiver();
  return {
    // A loopback receiver over plain http is what the tests' flag allows.
    command: ourApiCommand(nodeFlags, dataDir, { PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true' }),
    storedPlants: async () => countSqlitePlants(dataDir),
    delivered: receiver.received,
    prepare: async (url) => {
      const answer = await post(`${url}/webhooks`, BENCH_HEADERS, JSON.stringify({ url: receiver.url }));
      if (answer.status !== 201) throw new Error(`(e) answered POST /webhooks with ${answer.status} ${answer.body}`);
    },
    cleanup: async () => {
      await receiver.close();
      removeDataDir(dataDir);
    },
  };
});

const ourApiOnPostgres = (postgres: Postgres): Target =>
  target('d', async (nodeFlags = []) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plant-bench-pg-'));
    const database = await postgres.createDatabase();
    return {
      command: ourApiCommand(nodeFlags, dataDir, { DATABASE_URL: database.url }),
      storedPlants: () => postgres.countPlants(database.url),
      cleanup: async () => {
        await database.drop();
        removeDataDir(dataDir);
      },
    };
  });

/** (g): the peer that stores in PostgreSQL, on a database of its own per instance. */
const postgresPeer = (postgres: Postgres): Target =>
  target('g', async (nodeFlags = []) => {
    const database = await postgres.createDatabase();
    return {
      command: {
        args: [...nodeFlags, join(SERVERS_DIR, 'ts-rest-postgres-peer.ts')],
        cwd: REPO_ROOT,
        env: { ...baseEnv(), BENCH_TOKEN, DATABASE_URL: database.url },
      },
      storedPlants: () => postgres.countPlants(database.url),
      cleanup: () => database.drop(),
    };
  });

export const createTargets = (postgres: Postgres | undefined): Target[] => [
  reference('a', 'raw-node.ts'),
  reference('b', 'ts-rest-peer.ts'),
  ourApiOnSqlite,
  ...(postgres ? [ourApiOnPostgres(postgres)] : []),
  ourApiWithWebhook,
  ...(postgres ? [postgresPeer(postgres)] : []),
];

/**
 * Sends `count` creates with ids from `firstId`, `inFlight` at a time on keep-alive connections;
 * rejects on any answer but 200.
 */
export const sendCreates = (
  url: string,
  firstId: number,
  count: number,
  inFlight: number,
  bodyOf: (id: number) => string = plantBody,
): Promise<void> => {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight });
  let sent = 0;
  let answered = 0;
  return new Promise<void>((resolve, reject) => {
    const sendOne = () => {
      if (sent === count) return;
      const body = bodyOf(firstId + sent);
      sent += 1;
      const req = request(
        `${url}/plants`,
        { method: 'POST', agent, headers: { ...BENCH_HEADERS, 'content-length': Buffer.byteLength(body) } },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`POST /plants answered ${res.statusCode}`));
          res.resume().on('end', () => {
            answered += 1;
            if (answered === count) resolve();
            else sendOne();
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    };
    for (let slot = 0; slot < inFlight; slot += 1) sendOne();
  }).finally(() => agent.destroy());
};
