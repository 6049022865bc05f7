/**
 * One read-only client floods the service with the largest pages of the longest plants: `--plants`
 * plants whose name and tag are the longest the contract allows, in four-byte characters, then
 * `--readers` concurrent `GET /plants?limit=1000` for `--duration` seconds, on the embedded store
 * and on PostgreSQL. Memory must hold by bytes, not by counts: every answer is a page or a `503`,
 * the process and its store stay alive, and a create right after the flood is served. Prints the
 * answers by status, the peak RSS, and what a create and `/readyz` answer after. Never gated.
 *
 *   pnpm --filter @org/plant-bench page-flood [--plants 1000] [--readers 1000] [--duration 15] [--smoke]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgres } from './postgres.ts';
import { parseScriptArgs } from './script-args.ts';
import { post, startServer } from './server-process.ts';
import { BENCH_HEADERS, createTargets, sendCreates } from './targets.ts';

const values = parseScriptArgs({ plants: '1000', readers: '1000', duration: '15' }, ['smoke']);
const SMOKE = values.smoke;
const PLANTS = SMOKE ? 100 : Number(values.plants);
const READERS = SMOKE ? 50 : Number(values.readers);
const DURATION_MS = (SMOKE ? 1 : Number(values.duration)) * 1000;

/** The longest plant the contract allows, in characters of four bytes each (1,200 bytes of UTF-8). */
const longPlant = (id: number): string => JSON.stringify({ id, name: '🌿'.repeat(200), tag: '🌱'.repeat(100) });

type Tally = { statuses: Map<number, number>; errors: number; bytes: number };

/** One GET with the bench token; resolves with the status (0 for a socket error) once the body is read. */
const get = (agent: Agent, url: string, tally: Tally): Promise<number> =>
  new Promise((resolve) => {
    const req = request(url, { agent, headers: { authorization: BENCH_HEADERS.authorization } }, (res) => {
      res.on('data', (chunk: Buffer) => {
        tally.bytes += chunk.length;
      });
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });

/** READERS loops of maximal pages until the deadline. */
const flood = async (api: string): Promise<Tally> => {
  const tally: Tally = { statuses: new Map(), errors: 0, bytes: 0 };
  const agent = new Agent({ keepAlive: true, maxSockets: READERS });
  const deadline = performance.now() + DURATION_MS;
  const reader = async () => {
    while (performance.now() < deadline) {
      const status = await get(agent, `${api}/plants?limit=1000`, tally);
      if (status === 0) tally.errors += 1;
      else tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: READERS }, reader));
  agent.destroy();
  return tally;
};

const statusOf = async (url: string): Promise<number> => {
  const agent = new Agent();
  try {
    return await get(agent, url, { statuses: new Map(), errors: 0, bytes: 0 });
  } finally {
    agent.destroy();
  }
};

const run = async (key: 'c' | 'd', postgres: Awaited<ReturnType<typeof openPostgres>> | undefined) => {
  const target = createTargets(typeof postgres === 'string' ? undefined : postgres).find((t) => t.key === key);
  if (target === undefined) return `(${key}) skipped: ${typeof postgres === 'string' ? postgres : 'no target'}`;
  const instance = await target.instance();
  const dir = mkdtempSync(join(tmpdir(), 'plant-bench-flood-'));
  const server = await startServer(instance.command, join(dir, 'server.log'));
  try {
    await sendCreates(server.url, 1, PLANTS, 20, longPlant);
    const started = performance.now();
    const tally = await flood(server.url);
    const seconds = (performance.now() - started) / 1000;
    const create = await post(`${server.url}/plants`, BENCH_HEADERS, longPlant(PLANTS + 1));
    const healthz = await statusOf(`${server.url}/healthz`);
    const readyz = await statusOf(`${server.url}/readyz`);
    const page = await statusOf(`${server.url}/plants?limit=1000`);
    const answers = [...tally.statuses].map(([status, count]) => `${count} × ${status}`).join(', ');
    return [
      `(${key}) ${target.name}: ${READERS} readers for ${seconds.toFixed(1)} s`,
      `  answers: ${answers || 'none'}; socket errors: ${tally.errors}; ${(tally.bytes / 2 ** 20 / seconds).toFixed(1)} MiB/s of pages`,
      `  peak RSS ${(server.peakRss() / 2 ** 20).toFixed(0)} MiB`,
      `  after: create ${create.status}, page ${page}, /healthz ${healthz}, /readyz ${readyz}`,
    ].join('\n');
  } finally {
    await server.stop();
    await instance.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
};

const postgres = await openPostgres(process.env);
try {
  console.log(`Page flood: ${PLANTS} plants of 1,200 bytes of name and tag, pages of 1,000.`);
  console.log(await run('c', undefined));
  console.log(await run('d', postgres));
} finally {
  if (typeof postgres !== 'string') await postgres.close();
}
