import type { Clock } from '../../clock.ts';
import type { ClaimOptions } from '../../store/webhook-store.ts';
import type { PostOutcome } from './post-webhook.ts';

/**
 * Attempts in flight to an endpoint this worker knows nothing of yet: however many receivers hang
 * from the start, each holds one slot before its attempt is found slow.
 */
export const INITIAL_WINDOW = 1;
/** Up to this window, each quick answer adds one (slow start); beyond it, one per window of them. */
export const SLOW_START_WINDOW = 4;
/** The most attempts in flight to one endpoint, however quickly it answers. */
export const MAX_WINDOW = 32;
/**
 * An attempt in flight longer than this is slow, and so is its endpoint until it answers a 2xx
 * sooner: slow endpoints share the lingering slots, so that the prompt ones stay free for receivers
 * that answer. Far below the 1 s a healthy receiver should wait at most when others hang.
 */
export const SLOW_ATTEMPT_MS = 500;
/**
 * The pause of an endpoint after its first congestion signal; it doubles at each one that follows.
 * Also the shortest pause a Retry-After may ask for: one of 0 would not slow a receiver down.
 */
const FIRST_BACKOFF_MS = 100;
const MOST_BACKOFF_MS = 10_000;
/** The longest pause a Retry-After may impose (as for the delivery's own schedule). */
const MOST_RETRY_AFTER_MS = 24 * 3_600_000;
/**
 * A 2xx ending a streak of failed attempts that began at least this long ago ends an outage: the
 * endpoint's retries scheduled meanwhile may go now (see EndpointWindows.finished). Shorter streaks
 * are ordinary failures of single events, whose retries keep their schedule.
 */
export const OUTAGE_MS = 1_000;
/** Endpoints remembered at most (100 may exist): past it, those with nothing in flight are forgotten. */
const MOST_TRACKED = 1_000;

/**
 * What an attempt says of its receiver: a 2xx within SLOW_ATTEMPT_MS (quick), a 2xx later (slow);
 * congestion, only where the receiver or the network says so: 429, 503, a time-out, a refused or
 * reset connection (congested); any other answer (500, other 4xx and 5xx, 3xx) failed this event
 * alone, and says nothing of the receiver's load (failed); a target the address guard refused
 * says nothing at all (neutral). A receiver whose first call for each event fails (it reads the
 * plant back before it can see it) answers 500 to half the attempts while it has room for all.
 */
export type Signal = 'quick' | 'slow' | 'congested' | 'failed' | 'neutral';

export const signalOf = (outcome: PostOutcome, tookMs: number): Signal => {
  const { status } = outcome;
  if (status === undefined) return 'refused' in outcome && outcome.refused ? 'neutral' : 'congested';
  if (status >= 200 && status < 300) return tookMs < SLOW_ATTEMPT_MS ? 'quick' : 'slow';
  return status === 429 || status === 503 ? 'congested' : 'failed';
};

type Endpoint = {
  /** Attempts allowed in flight; fractional, so that it grows by one per window of quick answers. */
  window: number;
  inFlight: number;
  slow: boolean;
  /** Congestion signals in a row. */
  failures: number;
  pausedUntil: number;
  /** When the attempt that began the current streak of failures (congested or failed) ended; undefined after a 2xx. */
  failingSince: number | undefined;
};

export type Attempt = {
  readonly endpointId: string;
  /** Whether it holds a lingering slot: its endpoint was slow, or it has been in flight for SLOW_ATTEMPT_MS. */
  readonly lingering: boolean;
};

type Tracked = Attempt & { endpoint: Endpoint; startedAt: number; lingering: boolean; done: boolean };

export type WindowLimits = {
  /** Prompt slots: attempts in flight for less than SLOW_ATTEMPT_MS, or to endpoints not slow. */
  concurrency: number;
};

export type EndpointWindows = {
  /**
   * What the next claim may take: at most `limit`, and per endpoint its room; and where the claim
   * reports when a rate-limited endpoint it held back has room again (see nextChangeInMs).
   */
  plan(limits: WindowLimits): Pick<ClaimOptions, 'limit' | 'perEndpoint' | 'room' | 'onRateLimited'>;
  started(endpointId: string): Attempt;
  /**
   * The attempt ended, saying `signal` of its receiver; once, later calls are ignored. Congestion
   * halves the window and pauses the endpoint (for Retry-After when given, else 100 ms doubling at
   * each signal in a row up to 10 s); a failure leaves both as they are. True when a 2xx ends an
   * outage (failures in a row for OUTAGE_MS): the endpoint's retries scheduled meanwhile may go now.
   */
  finished(attempt: Attempt, signal: Signal, retryAfterMs?: number): boolean;
  /**
   * In ms from now, when the room changes without an attempt ending: the oldest prompt attempt turns
   * slow and frees its slot, an endpoint's pause (as of the last plan) ends, or a rate-limited
   * endpoint has room again (as the claim of the last plan reported); undefined if never.
   */
  nextChangeInMs(): number | undefined;
  /** The window of an endpoint, for tests and metrics. */
  windowOf(endpointId: string): number;
  /** Attempts in flight in prompt slots. */
  promptInFlight(): number;
};

/**
 * Per-endpoint windows of attempts in flight that follow each receiver (additive increase,
 * multiplicative decrease), and two pools of slots shared by all: `concurrency` prompt slots, and
 * `lingering` slots for attempts of slow endpoints. An attempt starts in a prompt slot, unless its
 * endpoint is slow; once in flight for SLOW_ATTEMPT_MS it moves to a lingering slot (when one is
 * free) and its endpoint is slow. Slow endpoints start attempts only into free lingering slots, in
 * turn, so however many receivers hang, answer slowly or refuse, they hold at most `lingering`
 * slots between them and the prompt slots stay for the receivers that answer. At most
 * `concurrency + lingering` attempts are in flight in all.
 */
export const createEndpointWindows = ({ lingering, clock }: { lingering: number; clock: Clock }): EndpointWindows => {
  const endpoints = new Map<string, Endpoint>();
  /** Prompt attempts oldest first; finished ones are dropped as they reach the head. */
  let prompt: Tracked[] = [];
  let promptHead = 0;
  let promptCount = 0;
  let lingeringCount = 0;
  /** Where the turn of slow endpoints starts at the next plan: each goes first in turn. */
  let slowTurn = 0;
  /** When the first pause seen by the last plan ends, or its claim's rate-limited endpoints have room again. */
  let resumesAt = Number.POSITIVE_INFINITY;
  /** When the last plan was made: its claim came after, so room it reports from then is never late. */
  let plannedAt = 0;
  // The store's limit holds across processes, so the room it reports is not this worker's to track:
  // it only brings the next claim forward.
  const onRateLimited = (roomInMs: number) => {
    resumesAt = Math.min(resumesAt, plannedAt + roomInMs);
  };

  const endpointOf = (id: string): Endpoint => {
    let endpoint = endpoints.get(id);
    if (endpoint === undefined) {
      if (endpoints.size >= MOST_TRACKED)
        for (const [known, state] of endpoints) if (state.inFlight === 0) endpoints.delete(known);
      endpoint = {
        window: INITIAL_WINDOW,
        inFlight: 0,
        slow: false,
        failures: 0,
        pausedUntil: 0,
        failingSince: undefined,
      };
      endpoints.set(id, endpoint);
    }
    return endpoint;
  };

  /**
   * Prompt attempts in flight for SLOW_ATTEMPT_MS make their endpoints slow and move to lingering
   * slots; while none is free, they keep their prompt slots until they end (at most the timeout).
   */
  const age = (now: number) => {
    while (promptHead < prompt.length) {
      const oldest = prompt[promptHead] as Tracked;
      if (!oldest.done) {
        if (now - oldest.startedAt < SLOW_ATTEMPT_MS) break;
        oldest.endpoint.slow = true;
        if (lingeringCount < lingering) {
          oldest.lingering = true;
          promptCount -= 1;
          lingeringCount += 1;
        }
      }
      promptHead += 1;
    }
    if (promptHead > 64 && promptHead * 2 > prompt.length) {
      prompt = prompt.slice(promptHead);
      promptHead = 0;
    }
  };

  return {
    plan({ concurrency }) {
      const now = clock.now();
      plannedAt = now;
      age(now);
      const promptRoom = Math.max(0, concurrency - promptCount);
      let lingeringRoom = Math.max(0, lingering - lingeringCount);
      const room = new Map<string, number>();
      const slow: [string, number][] = [];
      resumesAt = Number.POSITIVE_INFINITY;
      for (const [id, endpoint] of endpoints) {
        const paused = endpoint.pausedUntil > now;
        if (paused) resumesAt = Math.min(resumesAt, endpoint.pausedUntil);
        const free = paused ? 0 : Math.max(0, Math.floor(endpoint.window) - endpoint.inFlight);
        if (endpoint.slow && free > 0) slow.push([id, free]);
        else room.set(id, endpoint.slow ? 0 : Math.min(free, promptRoom));
      }
      // One lingering slot to each slow endpoint in turn, then a second to each, and so on.
      let slowGiven = 0;
      for (const [id] of slow) room.set(id, 0);
      for (let pass = 1, any = true; any && lingeringRoom > 0; pass++) {
        any = false;
        for (let index = 0; index < slow.length && lingeringRoom > 0; index++) {
          const [id, free] = slow[(slowTurn + index) % slow.length] as [string, number];
          if (free < pass) continue;
          room.set(id, pass);
          lingeringRoom -= 1;
          slowGiven += 1;
          any = true;
        }
      }
      // Those left without a slot go first next time.
      const firstPass = Math.min(slow.length, slowGiven);
      slowTurn = slow.length === 0 ? 0 : (slowTurn + (firstPass < slow.length ? firstPass : 1)) % slow.length;
      return {
        limit: promptRoom + slowGiven,
        perEndpoint: Math.min(INITIAL_WINDOW, promptRoom),
        room,
        onRateLimited,
      };
    },

    started(endpointId) {
      const endpoint = endpointOf(endpointId);
      endpoint.inFlight += 1;
      const attempt: Tracked = { endpointId, endpoint, startedAt: clock.now(), lingering: endpoint.slow, done: false };
      if (attempt.lingering) lingeringCount += 1;
      else {
        promptCount += 1;
        prompt.push(attempt);
      }
      return attempt;
    },

    finished(attempt, signal, retryAfterMs) {
      const tracked = attempt as Tracked;
      const { endpoint } = tracked;
      if (tracked.done) return false;
      tracked.done = true;
      endpoint.inFlight -= 1;
      if (tracked.lingering) lingeringCount -= 1;
      else promptCount -= 1;
      const now = clock.now();
      let recovered = false;
      if (signal === 'quick' || signal === 'slow') {
        recovered = endpoint.failingSince !== undefined && now - endpoint.failingSince >= OUTAGE_MS;
        endpoint.failingSince = undefined;
      } else if (signal !== 'neutral') endpoint.failingSince ??= now;
      if (signal === 'quick') {
        endpoint.slow = false;
        endpoint.failures = 0;
        const step = endpoint.window < SLOW_START_WINDOW ? 1 : 1 / Math.floor(endpoint.window);
        endpoint.window = Math.min(MAX_WINDOW, endpoint.window + step);
      } else if (signal === 'slow') {
        endpoint.slow = true;
        endpoint.failures = 0;
      } else if (signal === 'congested') {
        endpoint.slow = true;
        endpoint.failures += 1;
        endpoint.window = Math.max(1, endpoint.window / 2);
        // Retry-After is the receiver's own word on when it has room again: it replaces the guess.
        const pause =
          retryAfterMs === undefined
            ? Math.min(MOST_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (endpoint.failures - 1))
            : Math.min(Math.max(retryAfterMs, FIRST_BACKOFF_MS), MOST_RETRY_AFTER_MS);
        endpoint.pausedUntil = Math.max(endpoint.pausedUntil, now + pause);
      } else if (signal === 'failed') {
        // It answered: not congested, so the next congestion signal starts a new streak of pauses.
        endpoint.failures = 0;
      }
      // An endpoint back where it started is forgotten: it is treated as unknown, the same.
      if (
        endpoint.inFlight === 0 &&
        !endpoint.slow &&
        endpoint.failures === 0 &&
        endpoint.failingSince === undefined &&
        endpoint.window === INITIAL_WINDOW &&
        endpoints.get(attempt.endpointId) === endpoint
      )
        endpoints.delete(attempt.endpointId);
      return recovered;
    },

    nextChangeInMs() {
      let at = resumesAt;
      if (lingeringCount < lingering)
        for (let index = promptHead; index < prompt.length; index++) {
          const attempt = prompt[index] as Tracked;
          if (attempt.done) continue;
          at = Math.min(at, attempt.startedAt + SLOW_ATTEMPT_MS);
          break;
        }
      return at === Number.POSITIVE_INFINITY ? undefined : Math.max(0, at - clock.now());
    },

    windowOf: (endpointId) => Math.floor(endpoints.get(endpointId)?.window ?? INITIAL_WINDOW),

    promptInFlight: () => promptCount,
  };
};
