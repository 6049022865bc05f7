// Shared with bench/src/receiver-fairness.ts, which measures what webhook-fairness.test.ts bounds.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Calls `send` for ids 1 to `count`, each at its time of a steady `perSecond` (a late one is sent at
 * once), and records each id's send time by `now` in `sentAt` before sending it, so that an arrival
 * can be timed while the sends go on. Resolves once every send has settled.
 */
export const sendSteadily = async (
  count: number,
  perSecond: number,
  now: () => number,
  sentAt: Map<number, number>,
  send: (id: number) => Promise<unknown>,
): Promise<void> => {
  const sends: Promise<unknown>[] = [];
  const start = now();
  for (let index = 0; index < count; index++) {
    await sleep(start + (index * 1000) / perSecond - now());
    const id = index + 1;
    sentAt.set(id, now());
    sends.push(send(id));
  }
  await Promise.all(sends);
};

/** The value at `share` (0 to 1) of values sorted ascending: the nearest-rank percentile. */
export const percentile = (sorted: readonly number[], share: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] ?? Number.NaN;
