import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limiter.ts';

describe('RateLimiter', () => {
  it('allows a burst, then refuses with the seconds to wait, then refills with time', () => {
    const limiter = new RateLimiter({ perSecond: 2, burst: 3 });
    expect([0, 0, 0].map(() => limiter.take('a', 0))).toEqual([0, 0, 0]);
    expect(limiter.take('a', 0)).toBe(1);
    expect(limiter.take('a', 500)).toBe(0);
    expect(limiter.take('a', 500)).toBe(1);
    expect(limiter.take('a', 10_000)).toBe(0);
  });

  it('keeps keys independent', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1 });
    expect(limiter.take('flood', 0)).toBe(0);
    expect(limiter.take('flood', 0)).toBe(1);
    expect(limiter.take('calm', 0)).toBe(0);
  });

  it('answers longer waits for slow refills', () => {
    const limiter = new RateLimiter({ perSecond: 1 / 60, burst: 1 });
    limiter.take('a', 0);
    expect(limiter.take('a', 0)).toBe(60);
  });

  it('answers the wait for the part of a request not yet earned back', () => {
    const limiter = new RateLimiter({ perSecond: 0.1, burst: 1 });
    limiter.take('a', 0);
    // Half a request earned back after 5 s: the other half takes 5 s more.
    expect(limiter.take('a', 5_000)).toBe(5);
  });

  /** A limiter whose 'spent' key used its burst of 2 at `spentAt`, swept at `sweptAt` by 10,000 other keys. */
  const sweptAfterSpending = (perSecond: number, spentAt: number, sweptAt: number) => {
    const limiter = new RateLimiter({ perSecond, burst: 2 });
    limiter.take('spent', spentAt);
    limiter.take('spent', spentAt);
    for (let i = 0; i < 10_000; i += 1) limiter.take(`key-${i}`, sweptAt);
    return limiter;
  };

  it('forgets only full buckets when it sweeps idle keys: a spent key stays limited', () => {
    // Swept in the same instant: still spent.
    expect(sweptAfterSpending(1, 0, 0).take('spent', 0)).toBe(1);
  });

  it('judges a bucket full at the sweep by what it earned back since it was last spent', () => {
    // Two seconds later it has earned back one request of two: not full, so the sweep keeps it.
    const limiter = sweptAfterSpending(0.5, 1_000, 3_000);
    expect(limiter.take('spent', 3_000)).toBe(0);
    expect(limiter.take('spent', 3_000)).toBe(2);
  });
});
