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
});
