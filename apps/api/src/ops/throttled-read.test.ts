import { describe, expect, it } from 'vitest';
import { throttledRead } from './throttled-read.ts';

describe('throttledRead', () => {
  it('reads once per interval and never twice at once, sharing answers and failures', async () => {
    let clock = 0;
    let reads = 0;
    let fail = false;
    const read = throttledRead(
      async () => {
        reads += 1;
        if (fail) throw new Error('store down');
        return reads;
      },
      { intervalMs: 1_000, now: () => clock },
    );
    const concurrent = [read(), read(), read()];
    expect(reads).toBe(1);
    expect(await Promise.all(concurrent)).toEqual([1, 1, 1]);
    clock = 999;
    expect(await read()).toBe(1);
    clock = 1_000;
    fail = true;
    await expect(read()).rejects.toThrow('store down');
    clock = 1_500;
    await expect(read()).rejects.toThrow('store down');
    expect(reads).toBe(2);
    clock = 2_000;
    fail = false;
    expect(await read()).toBe(3);
  });
});
