import { createClock } from '@sinonjs/fake-timers';
import type { Clock } from '../../src/clock.ts';

/** A clock that stands still until `advance` moves it. */
export type ManualClock = Clock & {
  /**
   * Moves time on by `ms`, running every timer that falls due on the way, in order, and letting
   * the promises each one settles run before the next.
   */
  advance(ms: number): Promise<void>;
};

/**
 * How far ahead of real time a manual clock starts. The embedded store's database thread keeps real
 * time for what it stamps (a plant's announcement is due when it is made); ahead of it, the clock
 * finds those due at once, as a single clock would. A test times out long before real time catches
 * up, and webhook signatures stay within receivers' 5-minute tolerance.
 */
const AHEAD_MS = 60_000;

/**
 * A clock of a test's own (sinon's fake timers, not installed globally: real timers, sockets and
 * the store's database thread keep real time).
 */
export const manualClock = (start = Date.now() + AHEAD_MS): ManualClock => {
  const fake = createClock(start);
  return {
    now: () => fake.now,
    setTimeout: (callback, ms) => {
      const timer = fake.setTimeout(callback, ms);
      return () => fake.clearTimeout(timer);
    },
    advance: async (ms) => {
      await fake.tickAsync(ms);
    },
  };
};
