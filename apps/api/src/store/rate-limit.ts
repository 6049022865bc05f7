/**
 * An endpoint's rate limit, as both stores apply it where deliveries are claimed: the generic cell
 * rate algorithm (GCRA). Each rate-limited endpoint keeps a theoretical arrival time (TAT); every
 * delivery claimed moves it 1000 / rate ms on from now or from where it was, whichever is later,
 * and a claim takes no more than keeps it within RATE_BURST_MS of now. So over any t seconds at
 * most rate × t deliveries are claimed, plus a burst of one second's worth, and since the TAT is
 * in the database, beside the endpoint, that holds however many loops and processes claim.
 * PostgreSQL writes the same arithmetic in SQL (postgres/webhooks.ts, claimDue).
 */

/** The burst: one second's worth of deliveries at the endpoint's rate (at least one). */
const RATE_BURST_MS = 1_000;

/**
 * Guards the floor against floating-point residue (a TAT advanced by thirds of a millisecond): far
 * below a delivery, so it never lets one more through than the rate allows.
 */
const EPSILON = 1e-6;

/** How far past `now` the TAT starts: a TAT in the past (or none yet) counts from now. */
const startOf = (now: number, tat: number | null): number => (tat === null || tat < now ? now : tat);

/** How many deliveries the endpoint may be claimed now. */
export const rateRoom = (now: number, tat: number | null, rate: number): number =>
  Math.max(0, Math.floor(((now + RATE_BURST_MS - startOf(now, tat)) * rate) / 1_000 + EPSILON));

/** The TAT after `claimed` more deliveries at `now`. */
export const advancedTat = (now: number, tat: number | null, rate: number, claimed: number): number =>
  startOf(now, tat) + (claimed * 1_000) / rate;

/**
 * A tenth of a second's worth (at least one): the room a held-back endpoint waits for, so that a
 * backlog drains in batches of that size, not in a claim per delivery.
 */
const wakeBatch = (rate: number): number => Math.max(1, Math.ceil(rate / 10));

/** In ms from `now`, when an endpoint at `tat` has room for wakeBatch again; undefined when it has already. */
export const roomInMs = (now: number, tat: number, rate: number): number | undefined => {
  const at = tat + (wakeBatch(rate) * 1_000) / rate - RATE_BURST_MS;
  return at > now ? at - now : undefined;
};

/**
 * The TAT once the limit changes from `from` to `to` (null: removed) at `now`: what was sent within
 * the burst counts at the new rate, at most a burst, so a lower limit holds the endpoint back for at
 * most a second and a higher one lets the difference through at once.
 */
export const rescaledTat = (now: number, tat: number | null, from: number | null, to: number | null): number | null =>
  to === null || from === null || tat === null || tat <= now
    ? null
    : now + Math.min(RATE_BURST_MS, ((tat - now) * from) / to);
