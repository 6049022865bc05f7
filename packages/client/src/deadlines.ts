/** An attempt's place in the watch: `expire` runs once its time is up, unless it is removed first. */
export type Deadline = { readonly at: number; readonly expire: () => void };

export type Deadlines = {
  /** Runs `expire` once `timeoutMs` have passed, unless the deadline is removed first. */
  add(timeoutMs: number, expire: () => void): Deadline;
  remove(deadline: Deadline): void;
};

type Timer = ReturnType<typeof setTimeout>;

/** The longest wait a timer takes as it is (2^31 − 1 ms, about 24.8 days); a longer one is set again. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The timeouts of the attempts in flight, watched by one timer set for the earliest of them, rather
 * than a timer each: setting and clearing a timer per request was about a quarter of the client's own
 * work on a call, while adding and removing a deadline is a Set operation. The timer is left set when
 * an attempt ends; when it fires it expires what is due and is set again for what remains. It holds
 * the process open only while attempts are in flight (on Node; browsers have no such notion).
 *
 * When the timer fires, every deadline up to the one it was set for is due, and the time is taken to
 * be at least that: the timer's own clock decides, so fake timers in tests drive it whether or not
 * they also fake `performance.now()`.
 */
export const createDeadlines = (): Deadlines => {
  const pending = new Set<Deadline>();
  let timer: Timer | undefined;
  /** When the timer fires: the earliest deadline pending, unless that is beyond MAX_TIMER_MS. */
  let firesAt = Number.POSITIVE_INFINITY;
  let firedAt = Number.NEGATIVE_INFINITY;
  const now = () => Math.max(performance.now(), firedAt);

  const set = (at: number) => {
    clearTimeout(timer);
    const start = now();
    firesAt = at - start > MAX_TIMER_MS ? start + MAX_TIMER_MS : at;
    timer = setTimeout(fire, Math.max(firesAt - start, 0));
  };

  const fire = () => {
    const due = firesAt;
    firedAt = due;
    timer = undefined;
    firesAt = Number.POSITIVE_INFINITY;
    let next = Number.POSITIVE_INFINITY;
    for (const deadline of pending) {
      if (deadline.at <= due) {
        pending.delete(deadline);
        deadline.expire();
      } else {
        next = Math.min(next, deadline.at);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) set(next);
  };

  return {
    add(timeoutMs, expire) {
      const deadline = { at: now() + timeoutMs, expire };
      pending.add(deadline);
      if (deadline.at < firesAt) set(deadline.at);
      // Browsers' timers are numbers, with nothing to hold open.
      else if (pending.size === 1) timer?.ref?.();
      return deadline;
    },
    remove(deadline) {
      if (pending.delete(deadline) && pending.size === 0) timer?.unref?.();
    },
  };
};
