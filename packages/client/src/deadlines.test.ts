import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDeadlines } from './deadlines.ts';

/** Timers that keep this process alive. */
const heldOpen = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

afterEach(() => {
  vi.useRealTimers();
});

describe('createDeadlines', () => {
  it('expires a deadline once its time is up, and not before', async () => {
    vi.useFakeTimers();
    const expired = vi.fn();
    createDeadlines().add(1000, expired);
    await vi.advanceTimersByTimeAsync(999);
    expect(expired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(expired).toHaveBeenCalledTimes(1);
    await vi.runAllTimersAsync();
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('never expires a removed deadline', async () => {
    vi.useFakeTimers();
    const deadlines = createDeadlines();
    const expired = vi.fn();
    deadlines.remove(deadlines.add(1000, expired));
    await vi.runAllTimersAsync();
    expect(expired).not.toHaveBeenCalled();
  });

  it('expires each of several deadlines at its own time, whatever order they were added in', async () => {
    vi.useFakeTimers();
    const deadlines = createDeadlines();
    const expired: string[] = [];
    const at = (name: string) => () => expired.push(`${name}@${Date.now()}`);
    const start = Date.now();
    deadlines.add(300, at('c'));
    deadlines.add(100, at('a'));
    await vi.advanceTimersByTimeAsync(50);
    deadlines.add(150, at('b'));
    deadlines.add(10_000, at('gone'));
    const removed = deadlines.add(120, at('removed'));
    deadlines.remove(removed);
    await vi.advanceTimersByTimeAsync(1000);
    expect(expired).toStrictEqual([`a@${start + 100}`, `b@${start + 200}`, `c@${start + 300}`]);
  });

  it('follows the timers alone, so fake timers drive it even with the real clock', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const deadlines = createDeadlines();
    const first = vi.fn();
    const second = vi.fn();
    deadlines.add(5000, first);
    deadlines.add(6000, second);
    await vi.advanceTimersByTimeAsync(5000);
    expect(first).toHaveBeenCalledTimes(1);
    expect(second).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1000);
    expect(second).toHaveBeenCalledTimes(1);
  });

  it('waits out a deadline beyond what one timer can wait (2^31 − 1 ms)', async () => {
    vi.useFakeTimers();
    const expired = vi.fn();
    createDeadlines().add(3 * 2 ** 31, expired);
    await vi.advanceTimersByTimeAsync(3 * 2 ** 31 - 1);
    expect(expired).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('holds the process open only while deadlines are pending', () => {
    const before = heldOpen();
    const deadlines = createDeadlines();
    const first = deadlines.add(60_000, () => {});
    const second = deadlines.add(60_000, () => {});
    expect(heldOpen()).toBe(before + 1);
    deadlines.remove(first);
    expect(heldOpen()).toBe(before + 1);
    deadlines.remove(second);
    expect(heldOpen()).toBe(before);
    const third = deadlines.add(60_000, () => {});
    expect(heldOpen()).toBe(before + 1);
    deadlines.remove(third);
    expect(heldOpen()).toBe(before);
  });

  it('holds nothing open once every deadline has expired', async () => {
    const before = heldOpen();
    const deadlines = createDeadlines();
    await new Promise<void>((resolve) => {
      deadlines.add(1, () => {});
      deadlines.add(5, resolve);
    });
    expect(heldOpen()).toBe(before);
  });

  it('keeps holding the process open while a deadline is pending, whatever else is removed', async () => {
    const before = heldOpen();
    const deadlines = createDeadlines();
    const pending = deadlines.add(60_000, () => {});
    const expired = await new Promise<ReturnType<typeof deadlines.add>>((resolve) => {
      const deadline = deadlines.add(1, () => resolve(deadline));
    });
    deadlines.remove(expired);
    expect(heldOpen()).toBe(before + 1);
    deadlines.remove(pending);
    expect(heldOpen()).toBe(before);
  });

  it('works with timers that are numbers, as in browsers, which have nothing to hold open', async () => {
    vi.useFakeTimers();
    const timers = new Map<number, ReturnType<typeof setTimeout>>();
    const [set, clear] = [globalThis.setTimeout, globalThis.clearTimeout];
    vi.stubGlobal('setTimeout', (run: () => void, ms: number) => timers.set(timers.size + 1, set(run, ms)).size);
    vi.stubGlobal('clearTimeout', (id: number | undefined) => clear(id === undefined ? id : timers.get(id)));
    try {
      const deadlines = createDeadlines();
      const expired = vi.fn();
      deadlines.remove(deadlines.add(1000, () => {}));
      deadlines.add(2000, expired);
      await vi.advanceTimersByTimeAsync(2000);
      expect(expired).toHaveBeenCalledTimes(1);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
