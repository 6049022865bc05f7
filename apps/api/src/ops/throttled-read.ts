/**
 * `read`, started at most once per `intervalMs` and never twice at once: calls while a read is in
 * flight, or within `intervalMs` of its end, share its answer (or failure). For metrics that query
 * the store, so that however often Prometheus (or anyone on the metrics port) scrapes, the store
 * sees at most one query a second.
 */
export const throttledRead = <T>(
  read: () => Promise<T>,
  { intervalMs = 1_000, now = () => performance.now() }: { intervalMs?: number; now?: () => number } = {},
): (() => Promise<T>) => {
  let last: Promise<T> | undefined;
  let pending = false;
  let settledAt = Number.NEGATIVE_INFINITY;
  return () => {
    if (last !== undefined && (pending || now() - settledAt < intervalMs)) return last;
    pending = true;
    last = read().finally(() => {
      pending = false;
      settledAt = now();
    });
    return last;
  };
};
