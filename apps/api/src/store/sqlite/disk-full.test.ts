import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import { SqlitePlantStore } from './sqlite-store.ts';

/** A small filesystem of its own, so that the data directory can really run out of space. */
const mountTmpfs = (): string | undefined => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
};

const mounted = mountTmpfs();

/** Fills the filesystem until the kernel says ENOSPC. */
const fillDisk = (file: string) => {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
};

describe.skipIf(mounted === undefined)('disk full under the data directory (needs root to mount a tmpfs)', () => {
  let server: TestServer;
  const dataDir = join(mounted ?? '', 'data');
  const filler = join(mounted ?? '', 'filler');

  beforeAll(async () => {
    server = await startTestServer(dataDir);
  });
  afterAll(async () => {
    await server?.stop();
    if (mounted) {
      execFileSync('umount', [mounted]);
      rmSync(mounted, { recursive: true, force: true });
    }
  });

  const post = (id: number, name = `Plant ${id}`) =>
    fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: `${name} ${'x'.repeat(150)}` }),
    });
  const get = (path: string) => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });

  it('answers 503 with Retry-After while full, keeps serving reads, and recovers once space returns', async () => {
    const acknowledged: number[] = [];
    for (let id = 1; id <= 20; id += 1) {
      expect((await post(id)).status).toBe(200);
      acknowledged.push(id);
    }

    fillDisk(filler);
    let refused: number | undefined;
    for (let id = 1000; id < 3000 && refused === undefined; id += 1) {
      const response = await post(id);
      if (response.status === 200) {
        acknowledged.push(id);
        continue;
      }
      await expectError(response, 503, /unavailable/);
      expect(response.headers.get('retry-after')).toBe('1');
      refused = id;
    }
    expect(refused, 'no create was refused although the disk is full').toBeDefined();

    // Still answering: reads of what is stored, and cheap requests.
    const read = await get('/plants/1');
    expect(read.status).toBe(200);
    expect(((await read.json()) as { id: number }).id).toBe(1);
    expect((await get('/plants?limit=5')).status).toBe(200);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await expectError(await fetch(`${server.url}/plants`, { method: 'POST' }), 401);

    rmSync(filler);
    const retried = await post(refused as number);
    expect(retried.status).toBe(200);
    acknowledged.push(refused as number);
    expect((await post(5000)).status).toBe(200);
    acknowledged.push(5000);

    for (const id of acknowledged) expect(await server.store.get(BigInt(id)), `plant ${id}`).toBeDefined();

    // And the database file is sound: a fresh open after the episode finds every acknowledged plant.
    await server.stop();
    const reopened = await SqlitePlantStore.open(dataDir);
    try {
      for (const id of acknowledged) expect(await reopened.get(BigInt(id)), `plant ${id}`).toBeDefined();
      expect(await reopened.get(BigInt(refused as number))).toBeDefined();
    } finally {
      await reopened.close();
    }
  }, 30_000);
});
