import { describe, expect, it } from 'vitest';
import { manualClock } from '#test/manual-clock';
import {
  type Attempt,
  createEndpointWindows,
  type EndpointWindows,
  INITIAL_WINDOW,
  MAX_WINDOW,
  OUTAGE_MS,
  SLOW_ATTEMPT_MS,
  SLOW_START_WINDOW,
  signalOf,
} from './endpoint-windows.ts';

const LIMITS = { concurrency: 64 };

/** The room a claim would give the endpoint: listed, else that of any endpoint. */
const roomOf = (windows: EndpointWindows, id: string, limits = LIMITS): number => {
  const plan = windows.plan(limits);
  return Math.min(plan.room.get(id) ?? plan.perEndpoint, plan.limit);
};

/** As the store claims: every endpoint's first before any endpoint's second, each within its room. */
const claim = (windows: EndpointWindows, due: string[], limits = LIMITS): Attempt[] => {
  const plan = windows.plan(limits);
  const left = new Map(due.map((id) => [id, plan.room.get(id) ?? plan.perEndpoint]));
  const started: Attempt[] = [];
  for (let turn = 0; started.length < plan.limit; turn++) {
    let any = false;
    for (const id of due) {
      if ((left.get(id) ?? 0) <= turn || started.length >= plan.limit) continue;
      started.push(windows.started(id));
      any = true;
    }
    if (!any) break;
  }
  return started;
};

/** Starts as many attempts as the endpoint's room allows and ends each with `signal`; how many. */
const round = (windows: EndpointWindows, id: string, signal: 'quick' | 'slow' | 'congested' | 'failed'): number => {
  const attempts = claim(windows, [id]);
  for (const attempt of attempts) windows.finished(attempt, signal);
  return attempts.length;
};

describe('signalOf', () => {
  it('reads quick and slow 2xx; congestion only where it is said; failures of one event', () => {
    expect(signalOf({ status: 204 }, SLOW_ATTEMPT_MS - 1)).toBe('quick');
    expect(signalOf({ status: 200 }, SLOW_ATTEMPT_MS)).toBe('slow');
    for (const congested of [
      { status: 429 },
      { status: 503, retryAfterMs: 2_000 },
      { status: 503 },
      { error: 'No 2xx answer within 15000 ms.' },
      { error: 'Connection failed: ECONNREFUSED.' },
      { error: 'Connection failed: ECONNRESET.' },
    ])
      expect(signalOf(congested, 10), JSON.stringify(congested)).toBe('congested');
    for (const failed of [500, 501, 502, 504, 400, 404, 410, 302])
      expect(signalOf({ status: failed }, 10)).toBe('failed');
    expect(signalOf({ error: 'Refused', refused: true }, 10)).toBe('neutral');
  });
});

describe('endpoint windows', () => {
  it('gives a receiver that answers quickly more in flight: one per answer, then one per window of answers, up to the cap', () => {
    const windows = createEndpointWindows({ lingering: 64, clock: manualClock() });
    expect(INITIAL_WINDOW).toBe(1);
    expect(round(windows, 'fast', 'quick')).toBe(1);
    expect(round(windows, 'fast', 'quick')).toBe(2);
    expect(round(windows, 'fast', 'quick')).toBe(SLOW_START_WINDOW);
    expect(round(windows, 'fast', 'quick')).toBe(SLOW_START_WINDOW + 1);
    expect(round(windows, 'fast', 'quick')).toBe(SLOW_START_WINDOW + 2);
    for (let rounds = 0; rounds < 100; rounds++) round(windows, 'fast', 'quick');
    expect(windows.windowOf('fast')).toBe(MAX_WINDOW);
    expect(roomOf(windows, 'fast')).toBe(MAX_WINDOW);
  });

  it('holds the window of a receiver that answers 2xx slowly', () => {
    const windows = createEndpointWindows({ lingering: 64, clock: manualClock() });
    for (let rounds = 0; rounds < 5; rounds++) expect(round(windows, 'slow', 'slow')).toBe(INITIAL_WINDOW);
    expect(windows.windowOf('slow')).toBe(INITIAL_WINDOW);
  });

  it('halves the window of a receiver that times out, fails or refuses, down to 1, and backs off', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 64, clock });
    // Grown first, as a receiver that was healthy.
    for (let rounds = 0; rounds < 20; rounds++) round(windows, 'ep', 'quick');
    const grown = windows.windowOf('ep');
    expect(grown).toBeGreaterThan(8);
    /** One attempt of those claimed times out; the others end saying nothing of load. */
    const oneTimesOut = () => {
      const [first, ...others] = claim(windows, ['ep']);
      windows.finished(first as Attempt, 'congested');
      for (const attempt of others) windows.finished(attempt, 'neutral');
    };
    oneTimesOut();
    expect(windows.windowOf('ep')).toBe(Math.floor(grown / 2));
    // Paused 100 ms after the first signal in a row, then 200, 400…
    expect(roomOf(windows, 'ep')).toBe(0);
    await clock.advance(100);
    expect(roomOf(windows, 'ep')).toBe(Math.floor(grown / 2));
    for (const pauseMs of [200, 400, 800, 1_600]) {
      oneTimesOut();
      await clock.advance(pauseMs - 1);
      expect(roomOf(windows, 'ep')).toBe(0);
      await clock.advance(1);
    }
    expect(windows.windowOf('ep')).toBe(1);
    expect(roomOf(windows, 'ep')).toBe(1);
    // A quick 2xx ends the streak: it grows again from where it is.
    windows.finished(claim(windows, ['ep'])[0] as Attempt, 'quick');
    expect(roomOf(windows, 'ep')).toBe(2);
  });

  it('neither shrinks nor pauses an endpoint for failures that are not congestion', () => {
    const windows = createEndpointWindows({ lingering: 64, clock: manualClock() });
    for (let rounds = 0; rounds < 10; rounds++) round(windows, 'ep', 'quick');
    const grown = windows.windowOf('ep');
    // A receiver failing every other attempt (each event's first): full room after each failure.
    for (let rounds = 0; rounds < 10; rounds++) {
      expect(round(windows, 'ep', 'failed')).toBe(grown);
      expect(roomOf(windows, 'ep')).toBe(grown);
    }
    expect(windows.windowOf('ep')).toBe(grown);
    expect(windows.nextChangeInMs()).toBeUndefined();
  });

  it('pauses an endpoint 2 s for a 503 with Retry-After: 2, whatever pauses came before', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 64, clock });
    // A streak of congestion first: the next pause of its own would be 1.6 s, then 3.2 s.
    for (const pauseMs of [100, 200, 400, 800]) {
      round(windows, 'ep', 'congested');
      await clock.advance(pauseMs);
    }
    windows.finished(claim(windows, ['ep'])[0] as Attempt, 'congested', 2_000);
    expect(roomOf(windows, 'ep')).toBe(0);
    expect(windows.nextChangeInMs()).toBe(2_000);
    await clock.advance(1_999);
    expect(roomOf(windows, 'ep')).toBe(0);
    await clock.advance(1);
    expect(roomOf(windows, 'ep')).toBe(1);
    // Retry-After: 0 still pauses briefly: it would not slow the receiver down otherwise.
    windows.finished(claim(windows, ['ep'])[0] as Attempt, 'congested', 0);
    expect(roomOf(windows, 'ep')).toBe(0);
    await clock.advance(100);
    expect(roomOf(windows, 'ep')).toBe(1);
  });

  it('tells when a 2xx ends an outage: failures in a row for OUTAGE_MS', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 64, clock });
    /** A round of attempts that each end with `signal`: whether one ended an outage. */
    const once = (signal: 'quick' | 'failed' | 'congested') =>
      claim(windows, ['ep']).filter((attempt) => windows.finished(attempt, signal)).length > 0;
    // Single events failing between 2xx: no outage however long it goes on.
    for (let step = 0; step < 10; step++) {
      expect(once('failed')).toBe(false);
      await clock.advance(OUTAGE_MS / 2);
      expect(once('quick')).toBe(false);
    }
    // Every attempt failing (answers, then refused connections) for OUTAGE_MS: the next 2xx ends an outage, once.
    expect(once('failed')).toBe(false);
    await clock.advance(OUTAGE_MS - 100);
    expect(once('congested')).toBe(false);
    // After its pause (each attempt in flight a signal: up to the longest).
    await clock.advance(10_000);
    expect(once('quick')).toBe(true);
    expect(once('quick')).toBe(false);
  });

  it("pauses an endpoint for a 429's or 503's Retry-After", async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 64, clock });
    const [limited, ...others] = claim(windows, ['ep']);
    windows.finished(limited as Attempt, 'congested', 30_000);
    for (const attempt of others) windows.finished(attempt, 'neutral');
    await clock.advance(29_999);
    expect(roomOf(windows, 'ep')).toBe(0);
    expect(windows.nextChangeInMs()).toBe(1);
    await clock.advance(1);
    expect(roomOf(windows, 'ep')).toBe(1);
  });

  it('brings the next claim forward to when the store says a rate-limited endpoint has room, for that claim only', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 64, clock });
    expect(windows.nextChangeInMs()).toBeUndefined();
    const { onRateLimited } = windows.plan(LIMITS);
    // Reported after the clock moved on: counted from the plan, before the claim, never late.
    await clock.advance(30);
    onRateLimited?.(100);
    await clock.advance(10);
    expect(windows.nextChangeInMs()).toBe(60);
    // The next claim reports again if the endpoint is still short of room; until then, nothing.
    windows.plan(LIMITS);
    expect(windows.nextChangeInMs()).toBeUndefined();
  });

  it('keeps the prompt slots for receivers that answer while 1, 4 or 16 hang', async () => {
    for (const count of [1, 4, 16]) {
      const clock = manualClock();
      const windows = createEndpointWindows({ lingering: 16, clock });
      const limits = { concurrency: 16 };
      const hanging = Array.from({ length: count }, (_, index) => `hanging${index}`);
      // Every receiver new, each with a backlog: the hanging ones take what they are given.
      const first = claim(windows, [...hanging, 'healthy'], limits);
      const held = first.filter(({ endpointId }) => endpointId !== 'healthy');
      for (const attempt of first) if (attempt.endpointId === 'healthy') windows.finished(attempt, 'quick');
      // Once their attempts are slow, the hanging receivers hold lingering slots, at most all 16.
      await clock.advance(SLOW_ATTEMPT_MS);
      for (let step = 0; step < 20; step++) {
        const attempts = claim(windows, [...hanging, 'healthy'], limits);
        held.push(...attempts.filter(({ endpointId }) => endpointId !== 'healthy'));
        const healthy = attempts.filter(({ endpointId }) => endpointId === 'healthy');
        expect(healthy.length, `beside ${count} hanging, step ${step}`).toBeGreaterThan(0);
        for (const attempt of healthy) windows.finished(attempt, 'quick');
        await clock.advance(SLOW_ATTEMPT_MS);
      }
      // Each never answered: it holds the one attempt a new endpoint starts with.
      expect(held.length).toBe(count);
      expect(windows.windowOf('healthy')).toBeGreaterThan(INITIAL_WINDOW);
      // Timed out at last: each hanging receiver is down to one at a time, after its pause.
      for (const attempt of held) windows.finished(attempt, 'congested');
      await clock.advance(10_000);
      const retried = claim(windows, hanging, limits);
      expect(retried).toHaveLength(Math.min(count, 16));
    }
  });

  it('takes turns among slow endpoints when there are more than lingering slots', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 4, clock });
    const limits = { concurrency: 16 };
    const slow = Array.from({ length: 8 }, (_, index) => `slow${index}`);
    for (const attempt of claim(windows, slow, limits)) windows.finished(attempt, 'slow');
    const served = new Set<string>();
    for (let step = 0; step < 2; step++) {
      const attempts = claim(windows, slow, limits);
      expect(attempts).toHaveLength(4);
      for (const attempt of attempts) {
        served.add(attempt.endpointId);
        windows.finished(attempt, 'slow');
      }
    }
    expect(served.size).toBe(8);
  });

  it('moves an attempt in flight for SLOW_ATTEMPT_MS to a lingering slot, freeing its prompt slot', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 4, clock });
    const limits = { concurrency: 4 };
    claim(windows, ['a', 'b', 'c', 'd'], limits);
    expect(windows.plan(limits).limit).toBe(0);
    expect(windows.nextChangeInMs()).toBe(SLOW_ATTEMPT_MS);
    await clock.advance(SLOW_ATTEMPT_MS);
    expect(windows.plan(limits).limit).toBe(4);
    expect(roomOf(windows, 'a', limits)).toBe(0);
    expect(roomOf(windows, 'other', limits)).toBe(INITIAL_WINDOW);
  });

  it('keeps an attempt turning slow in its prompt slot while every lingering slot is taken, until it ends', async () => {
    const clock = manualClock();
    const windows = createEndpointWindows({ lingering: 1, clock });
    const limits = { concurrency: 4 };
    const [, second] = claim(windows, ['a', 'b', 'c', 'd'], limits);
    await clock.advance(SLOW_ATTEMPT_MS);
    // One moved to the lingering slot; three hold their prompt slots; none of the four gets more.
    expect(windows.plan(limits).limit).toBe(1);
    for (const id of ['a', 'b', 'c', 'd']) expect(roomOf(windows, id, limits)).toBe(0);
    windows.finished(second as Attempt, 'congested');
    expect(windows.plan(limits).limit).toBe(2);
  });
});
