/**
 * The heap that the largest answers cost: the figures THREAD_HEAP_MB (store/sqlite/sqlite-store.ts) and
 * PLANT_MAX_ANSWER_BYTES (answer-budget.ts) are derived from.
 *
 *   node --expose-gc scripts/answer-heap.ts
 *
 * 1. The SQLite thread: on a database of 1,000 plants with the longest names and tags in four-byte
 *    characters, the heaviest batch the store sends (as many pages as BATCH_RESULT_BYTES admits,
 *    beside 1,024 creates of such plants, which answer conflicts with the stored row), twenty times
 *    over, on threads with smaller and smaller old generations: the smallest that survives.
 * 2. The HTTP thread: the heap that such a page holds while its answer is made (the plants decoded
 *    from the thread's reply, and the JSON text of the answer), per page, over 100 pages held at once.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { exactJsonReplacer, plantJson } from '@org/plant-contract';
import { LARGEST_NAME, LARGEST_TAG } from '#test/largest-values';
import { makeDataDir } from '#test/test-server';
import { PAGE_BYTES } from '../src/plants/plants-router.ts';
import type { StoredPlant } from '../src/store/plant-store.ts';
import { listBytes, plantBytes } from '../src/store/row-bytes.ts';
import { BATCH_RESULT_BYTES, SQLITE_FILE_NAME } from '../src/store/sqlite/database-thread.ts';
import { OPERATIONS } from '../src/store/sqlite/protocol.ts';
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-store.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('Run with node --expose-gc.');
const MiB = 1024 * 1024;
const name = LARGEST_NAME;
const tag = LARGEST_TAG;
const PLANTS = 1_000;

const dataDir = makeDataDir();
const store = await SqlitePlantStore.open(dataDir);
await Promise.all(Array.from({ length: PLANTS }, (_, id) => store.create({ id: BigInt(id), name, tag })));
await store.close();

// The pages one batch takes, as SqlitePlantStore admits them.
const pageBytes = listBytes({ limit: 1_001, maxBytes: PAGE_BYTES });
const pages = Math.max(1, Math.floor(BATCH_RESULT_BYTES / pageBytes));
const batch: unknown[] = [];
for (let page = 0; page < pages; page++) batch.push(OPERATIONS.list.code, null, 1_001, null, PAGE_BYTES);
for (let id = 0; id < 1_024; id++) {
  const plant = { id: BigInt(id % PLANTS), name, tag };
  batch.push(OPERATIONS.create.code, plant.id, tag, plantJson(plant), null);
}

const survives = async (oldGenerationMb: number): Promise<boolean> => {
  const worker = new Worker(new URL('../src/store/sqlite/thread.ts', import.meta.url), {
    execArgv: [],
    resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: oldGenerationMb },
    workerData: { dataDir, path: join(dataDir, SQLITE_FILE_NAME) },
  });
  const exited = new Promise<false>((resolve) => worker.once('exit', () => resolve(false)));
  worker.on('error', () => {});
  const replies: unknown[][] = [];
  let answered: () => void = () => {};
  worker.on('message', (message: unknown) => {
    if (Array.isArray(message)) {
      replies.push(message);
      answered();
    } else if ((message as { startup?: string }).startup === 'ready') answered();
  });
  const next = () =>
    Promise.race([new Promise<true>((resolve) => (answered = () => resolve(true))), exited]) as Promise<boolean>;
  if (!(await next())) return false;
  for (let round = 0; round < 20; round++) {
    worker.postMessage(batch);
    if (!(await next())) return false;
    replies.length = 0;
  }
  await worker.terminate();
  return true;
};

console.log(`SQLite thread: batches of ${pages} pages (${(pages * pageBytes) / MiB} MiB as counted) and 1,024 creates`);
for (const mb of [32, 24, 16, 12, 8, 6, 4]) {
  console.log(`  old generation ${mb} MiB: ${(await survives(mb)) ? 'survives' : 'out of memory'}`);
}

// A page as the HTTP thread holds it while it answers.
const perPage = Math.ceil(PAGE_BYTES / plantBytes({ id: 999n, name, tag }));
const held: unknown[] = [];
gc();
const before = process.memoryUsage().heapUsed;
for (let page = 0; page < 100; page++) {
  const plants: StoredPlant[] = Array.from({ length: perPage }, (_, id) => ({
    id: BigInt(id),
    // Distinct strings, as a reply decoded from the thread holds.
    name: `${name.slice(0, -2)}${String.fromCodePoint(0x1f331 + (page % 8))}`,
    tag: `${tag.slice(0, -2)}${String.fromCodePoint(0x1f331 + (id % 8))}`,
  }));
  held.push(plants, JSON.stringify(plants, exactJsonReplacer));
}
gc();
const perAnswer = (process.memoryUsage().heapUsed - before) / 100;
console.log(
  `HTTP thread: a page of ${perPage} such plants (${pageBytes} bytes reserved) holds ${(perAnswer / 1024).toFixed(0)} KiB of heap while answered (${(perAnswer / pageBytes).toFixed(2)} per byte reserved)`,
);
held.length = 0;
rmSync(dataDir, { recursive: true, force: true });
