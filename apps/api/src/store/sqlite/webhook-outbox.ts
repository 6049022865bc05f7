/**
 * The outbox's algorithms on the database thread: the fair claim across endpoints within their
 * rooms and rate limits, and the bounded fan-out of events to deliveries (webhooks.ts runs them in
 * its operations; their SQL is in webhook-statements.ts).
 */
import { advancedTat, rateRoom, roomInMs } from '../rate-limit.ts';
import { FAN_OUT_ROWS } from '../store-shared.ts';
import type { Thread } from './operation.ts';

/** A claim's arguments: the time, the most to claim, the lease's end and token, the rooms (see claimDue). */
export type Claim = [
  now: number,
  limit: number,
  until: number,
  token: string,
  perEndpoint: number,
  /** The rooms by endpoint id: the entries of ClaimOptions.room. */
  room: [endpointId: string, most: number][],
];

type ClaimEndpoint = { id: string; rate_limit: number | null; rate_tat: number | null };

/** A rate-limited endpoint during a claim: its limit, its TAT before the claim, what the claim took. */
type Limited = { rate: number; tat: number | null; claimed: number };

/**
 * Leases up to `limit` due deliveries, taking turns across the enabled endpoints: every
 * endpoint's oldest due delivery before any endpoint's second, each within its room and its rate
 * limit (whose TAT it advances in the same transaction) → the leased seqs, and in how many ms the
 * first rate-limited endpoint it left short of room has room again (null when none).
 */
export const claimFairly = (
  { webhooks }: Thread,
  ...[now, limit, until, token, perEndpoint, room]: Claim
): [chosen: { seq: bigint; endpoint: string }[], roomInMs: number | null] => {
  const listed = new Map(room);
  const candidates: { seq: bigint; due: bigint; turn: number; endpoint: string }[] = [];
  const limited = new Map<string, Limited>();
  for (const { id, rate_limit: rate, rate_tat: tat } of webhooks.claimEndpoints.all() as ClaimEndpoint[]) {
    let most = listed.get(id) ?? perEndpoint;
    if (rate !== null) {
      limited.set(id, { rate, tat, claimed: 0 });
      most = Math.min(most, rateRoom(now, tat, rate));
    }
    if (most <= 0) continue;
    const due = webhooks.dueOf.all(id, now, Math.min(most, limit)) as { seq: bigint; due: bigint }[];
    for (const [turn, row] of due.entries()) candidates.push({ seq: row.seq, due: row.due, turn, endpoint: id });
  }
  candidates.sort((a, b) => a.turn - b.turn || (a.due < b.due ? -1 : a.due > b.due ? 1 : 0));
  const chosen = candidates.slice(0, limit);
  for (const { seq, endpoint } of chosen) {
    webhooks.lease.run(seq, until, token);
    const rated = limited.get(endpoint);
    if (rated !== undefined) rated.claimed += 1;
  }
  let soonest: number | null = null;
  for (const [id, { rate, tat, claimed }] of limited) {
    const advanced = claimed === 0 ? tat : advancedTat(now, tat, rate, claimed);
    if (claimed > 0) webhooks.advanceRate.run(advanced, id);
    const wait = advanced === null ? undefined : roomInMs(now, advanced, rate);
    if (wait !== undefined && (soonest === null || wait < soonest)) soonest = wait;
  }
  return [chosen, soonest];
};

/**
 * Turns up to `limit` events (up to the event `last`) into deliveries, oldest first, and never
 * more than FAN_OUT_ROWS deliveries at once.
 */
export const fanOut = (thread: Thread, limit: number, last = BigInt(Number.MAX_SAFE_INTEGER)): boolean => {
  const { webhooks } = thread;
  const { count } = webhooks.enabledCount.get() as { count: number };
  const events = Math.max(1, Math.min(limit, Math.floor(FAN_OUT_ROWS / Math.max(1, count))));
  const { upTo } = webhooks.fanOutBound.get({ limit: events, last }) as { upTo: bigint | null };
  if (upTo === null) return false;
  thread.beginWrite();
  webhooks.fanOut.run({ upTo });
  webhooks.fannedOut.run({ upTo });
  return true;
};
