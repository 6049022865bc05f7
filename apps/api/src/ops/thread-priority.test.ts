import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { niceOf } from '#test/thread-nice';

const NICE_MODULE = new URL('../../test/support/thread-nice.ts', import.meta.url).href;

/** Runs lowerThreadPriority(steps) for each of `calls` in a thread of its own; its nice before and after each. */
const inThread = (calls: number[]): Promise<{ before: number; answered: number[]; after: number[] }> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       Promise.all([import(workerData.module), import(workerData.nice)]).then(([{ lowerThreadPriority }, { niceOf }]) => {
         const nice = () => niceOf('/proc/thread-self/stat');
         const before = nice(), answered = [], after = [];
         for (const steps of workerData.calls) { answered.push(lowerThreadPriority(steps)); after.push(nice()); }
         parentPort.postMessage({ before, answered, after });
       });`,
      {
        eval: true,
        workerData: { module: new URL('./thread-priority.ts', import.meta.url).href, nice: NICE_MODULE, calls },
      },
    );
    worker.once('message', (result) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });

describe.skipIf(process.platform !== 'linux')('lowerThreadPriority', () => {
  it('lowers the calling thread by the steps given, and no other thread', async () => {
    const main = niceOf('/proc/thread-self/stat');
    const { before, answered, after } = await inThread([3, 2]);
    expect(before).toBe(main);
    expect(after).toStrictEqual([Math.min(19, main + 3), Math.min(19, main + 5)]);
    expect(answered).toStrictEqual(after);
    expect(niceOf('/proc/thread-self/stat')).toBe(main);
  });

  it('stops at 19, the lowest priority', async () => {
    const { after } = await inThread([30, 1]);
    expect(after).toStrictEqual([19, 19]);
  });
});
