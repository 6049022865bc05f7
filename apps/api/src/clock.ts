/**
 * Time as a dependency of the webhook delivery loop and of the embedded store's outbox: what
 * time it is, and a callback once some time has passed. Tests give them a clock they move
 * themselves (test/support/manual-clock.ts), so that a retry, a lease or a timeout happens when the
 * test says, not when a busy machine gets round to it.
 */
export type Clock = {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Calls `callback` once `ms` have passed; returns the cancel. With `keepAlive: false` the wait
   * alone does not keep the process alive.
   */
  setTimeout(callback: () => void, ms: number, options?: { keepAlive?: boolean }): () => void;
};

/** The process's own time and timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms, { keepAlive = true } = {}) => {
    const timer = setTimeout(callback, ms);
    if (!keepAlive) timer.unref();
    return () => clearTimeout(timer);
  },
};
