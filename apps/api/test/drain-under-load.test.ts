import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collectOutput } from '#test/child-output';
import { httpRequest } from '#test/http-request';
import type { LoadSummary } from '#test/keep-alive-load';
import { killAllMains, logLines, MAIN_TEST_TOKEN, startMain } from '#test/main-process';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';

const LOAD = join(import.meta.dirname, 'support', 'keep-alive-load.ts');
const CONNECTIONS = 20;
const DRAIN_MS = 2_000;
const GRACE_MS = 10_000;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await killAllMains();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(killAllMains);

/** The load generator as a process of its own: its event loop must not be the one under test. */
const startLoad = (url: string) => {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    // Bounded: 30 s or 300,000 requests at most, whatever the service does.
    [LOAD, url, MAIN_TEST_TOKEN, String(CONNECTIONS), '30000', '300000'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  cleanups.push(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const { stdout, stderr } = collectOutput(child);
  const finished = new Promise<LoadSummary>((resolve, reject) =>
    child.once('exit', (code) => {
      const last = stdout().trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{"statuses"')) resolve(JSON.parse(last) as LoadSummary);
      else reject(new Error(`The load generator exited ${code}: ${stdout()}\n${stderr()}`));
    }),
  );
  const warm = new Promise<void>((resolve, reject) => {
    const check = () => stdout().includes('{"warm":true}') && resolve();
    child.stdout.on('data', check);
    finished.then(() => reject(new Error(`The load ended before it was warm: ${stdout()}`)), reject);
  });
  return { warm, finished };
};

/**
 * What a rolling deploy does to a replica: busy keep-alive clients, then SIGTERM. Every request a
 * client wrote must be answered 200; connections refused once the listener is closed are fine
 * (their requests were never written).
 */
const drainsWithoutResets = async (env: Record<string, string>) => {
  const server = await startMain({
    ...env,
    PLANT_API_TOKENS: MAIN_TEST_TOKEN,
    PLANT_RATE_LIMIT_PER_TOKEN: '0',
    // Not what this test is about: on a busy machine (pnpm test:stress) the service rightly sheds
    // creates (503) when its event loop falls behind, or when a statement outlasts its 5 s default.
    PLANT_MAX_EVENT_LOOP_DELAY_MS: '0',
    PLANT_DB_STATEMENT_TIMEOUT_MS: '60000',
    PLANT_SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
    PLANT_SHUTDOWN_GRACE_MS: String(GRACE_MS),
  });
  const load = startLoad(server.url);
  await load.warm;
  await new Promise((resolve) => setTimeout(resolve, 500));

  const signalledAt = Date.now();
  server.child.kill('SIGTERM');
  await server.waitForStdout(/"msg":"shutting down"/);
  // Readiness fails at once, while the service still answers.
  const ready = await httpRequest(`${server.url}/readyz`, { agent: false });
  expect(ready.status).toBe(503);
  expect(ready.headers.connection).toBe('close');

  const exit = await server.exited(DRAIN_MS + GRACE_MS + 5_000);
  const exitMs = Date.now() - signalledAt;
  const summary = await load.finished;

  expect(exit).toStrictEqual({ code: 0, signal: null });
  expect(logLines(server.stdout()).map((line) => line.msg)).toEqual(
    expect.arrayContaining(['shutting down', 'stopped']),
  );
  expect(summary.failures).toStrictEqual([]);
  expect(summary.failed).toBe(0);
  expect(Object.keys(summary.statuses)).toStrictEqual(['200']);
  // Served through the drain window, every answer closing its connection, until each client was refused.
  expect(summary.closeAnswers).toBeGreaterThan(CONNECTIONS);
  expect(summary.refused).toBe(CONNECTIONS);
  expect(exitMs).toBeGreaterThanOrEqual(DRAIN_MS);
  // Exits once drained, not once the grace is over: the bound lies halfway between, generous so
  // that a busy machine cannot fail it.
  expect(exitMs).toBeLessThan(DRAIN_MS + GRACE_MS / 2);
  console.info(
    `drain: ${summary.statuses['200']} creates answered, ${summary.closeAnswers} during the drain window, 0 failed; exit 0 after ${exitMs} ms`,
  );
};

describe('drain under keep-alive load (SQLite)', () => {
  it('on SIGTERM answers every written request, resets none, and exits 0 after the drain window', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plant-drain-test-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    await drainsWithoutResets({ PLANT_DATA_DIR: dataDir });
  }, 90_000);
});

describeWithPostgres('drain under keep-alive load (PostgreSQL)', () => {
  it('on SIGTERM answers every written request, resets none, and exits 0 after the drain window', async () => {
    const database: TestDatabase = await freshDatabase('plant_drain_load');
    cleanups.push(() => database.drop());
    await drainsWithoutResets({ DATABASE_URL: database.url });
  }, 90_000);
});
