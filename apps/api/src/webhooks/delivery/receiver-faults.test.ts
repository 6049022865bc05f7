import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { type ManualClock, manualClock } from '#test/manual-clock';
import { TEST_TOKEN } from '#test/test-server';
import type { Answer, ReceivedWebhook, WebhookReceiver } from '#test/webhook-receiver';
import { registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

/** The loop's idle poll: a retry falls due between two polls. */
const POLL_MS = 100;
/** How far the clock moves at a time; between steps, real time lets the loop and the receiver work. */
const STEP_MS = 50;
const SETTLE_MS = 10;
/** Beyond what the schedule or a pause asks: a poll, a step, and a step's worth of lag on a busy machine. */
const MARGIN_MS = POLL_MS + 4 * STEP_MS;

const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

/** Moves the clock on by `ms`, a step at a time, letting real work happen between steps. */
const run = async (clock: ManualClock, ms: number) => {
  for (let moved = 0; moved < ms; moved += STEP_MS) {
    await clock.advance(Math.min(STEP_MS, ms - moved));
    await settle();
  }
};

/**
 * The service with one receiver, on a clock of the test's own (the loop's and the store's); the
 * receiver's answers are chosen by `answer` from the attempts its event had before. Tells, by
 * plant id, when each create was answered and when its event was first answered 2xx (clock time).
 */
const serviceWith = async (retryDelaysMs: number[], answer: (attemptsBefore: number) => Answer) => {
  const clock = manualClock();
  const service = await startWebhookService(
    { retryDelaysMs },
    { clock, pollIntervalMs: POLL_MS },
    { storeClock: clock },
  );
  defer(service.cleanup);
  const hook: WebhookReceiver = await deferredReceiver(defer);
  const attempts = new Map<string, number>();
  const plantOf = new Map<number, string>();
  const arrivals: number[] = [];
  const createdAt = new Map<number, number>();
  const deliveredAt = new Map<number, number>();
  let answering = answer;
  hook.answer((request: ReceivedWebhook) => {
    const id = String(request.headers['webhook-id']);
    const before = attempts.get(id) ?? 0;
    attempts.set(id, before + 1);
    arrivals.push(clock.now());
    const chosen = answering(before);
    const plant = (JSON.parse(request.body) as { id: number }).id;
    plantOf.set(plant, id);
    if (typeof chosen === 'object' && chosen.status < 300 && !deliveredAt.has(plant))
      deliveredAt.set(plant, clock.now());
    return chosen;
  });
  await registerEndpoint(service.base, hook.url);
  let next = 1;
  /** Creates `count` plants at `perSecond` of the clock. */
  const createSteadily = async (count: number, perSecond: number) => {
    for (let created = 0; created < count; created++) {
      const id = next++;
      expect((await postPlant(service.base, TEST_TOKEN, { id: BigInt(id), name: `Plant ${id}` })).status).toBe(200);
      createdAt.set(id, clock.now());
      await run(clock, 1_000 / perSecond);
    }
  };
  /** Moves the clock on until every plant created is delivered, at most `mostMs`. */
  const runUntilDelivered = async (mostMs: number) => {
    for (let moved = 0; moved < mostMs && deliveredAt.size < createdAt.size; moved += STEP_MS)
      await run(clock, STEP_MS);
    expect(deliveredAt.size).toBe(createdAt.size);
  };
  /** How long after its create each plant was delivered, longest first. */
  const latencies = () =>
    [...createdAt].map(([id, at]) => (deliveredAt.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => b - a);
  return {
    clock,
    hook,
    arrivals,
    attempts,
    deliveredAt,
    createdAt: () => createdAt,
    /** Attempts that reached the receiver for the plant's event. */
    attemptsOf: (plant: number) => attempts.get(plantOf.get(plant) ?? ''),
    createSteadily,
    runUntilDelivered,
    latencies,
    answerWith: (next: (attemptsBefore: number) => Answer) => {
      answering = next;
    },
  };
};

describe('receivers that fail', () => {
  it('delivers every event to a receiver that fails the first attempt of each, at its first retry', async () => {
    // Each 500 used to pause the whole endpoint; the attempt after each pause was a new event's
    // first, which failed again: 0 of 600 delivered after 70 s.
    const service = await serviceWith([5_000, 300_000, 1_800_000], (before) => ({ status: before === 0 ? 500 : 204 }));
    await service.createSteadily(100, 20);
    await service.runUntilDelivered(10_000);
    expect(service.latencies()[0]).toBeLessThanOrEqual(5_000 + MARGIN_MS);
    // No retry was spent: two attempts each.
    expect([...service.attempts.values()].every((count) => count === 2)).toBe(true);
  }, 60_000);

  it('delivers every event to a receiver that fails the first two attempts of each, after the first two delays', async () => {
    const service = await serviceWith([300, 600, 1_200, 2_400], (before) => ({ status: before < 2 ? 500 : 204 }));
    await service.createSteadily(16, 20);
    await service.runUntilDelivered(10_000);
    expect(service.latencies()[0]).toBeLessThanOrEqual(300 + 600 + MARGIN_MS);
    expect([...service.attempts.values()].every((count) => count === 3)).toBe(true);
  }, 60_000);

  it('delivers to a receiver failing 30% of attempts at random each event after the delays of its own failures', async () => {
    const delays = [1_000, 2_000, 4_000, 8_000];
    // The same draws at every run (a linear congruential generator), about 30% of them failures.
    let seed = 47;
    const draw = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const service = await serviceWith(delays, () => ({ status: draw() < 0.3 ? 500 : 204 }));
    await service.createSteadily(100, 20);
    await service.runUntilDelivered(20_000);
    const created = service.createdAt();
    let atOnce = 0;
    for (const [id, deliveredAt] of service.deliveredAt) {
      const failures = (service.attemptsOf(id) ?? 1) - 1;
      if (failures === 0) atOnce += 1;
      const waited = delays.slice(0, failures).reduce((sum, delay) => sum + delay, 0);
      expect(deliveredAt - (created.get(id) as number), `plant ${id} after ${failures} failures`).toBeLessThanOrEqual(
        waited + MARGIN_MS,
      );
    }
    // Most at once: a failure pauses nothing.
    expect(atOnce).toBeGreaterThan(55);
  }, 60_000);

  it('pauses the endpoint 2 s after a 503 with Retry-After: 2', async () => {
    let answered = 0;
    const service = await serviceWith([300, 300], () =>
      answered++ === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 204 },
    );
    await service.createSteadily(5, 1_000);
    await service.runUntilDelivered(5_000);
    const [first, second] = service.arrivals as [number, number];
    expect(second - first).toBeGreaterThanOrEqual(2_000);
    expect(second - first).toBeLessThanOrEqual(2_000 + MARGIN_MS);
  }, 60_000);

  type Service = Awaited<ReturnType<typeof serviceWith>>;
  const outages: Record<
    string,
    { down(service: Service): Promise<void> | void; up(service: Service): Promise<void> | void }
  > = {
    'answers 500 to everything': {
      down: (service) => service.answerWith(() => ({ status: 500 })),
      up: (service) => service.answerWith(() => ({ status: 204 })),
    },
    // Reset connections: congestion, so the endpoint is paused, up to 10 s at a time.
    'refuses connections': { down: (service) => service.hook.stop(), up: (service) => service.hook.start() },
  };

  it.each(Object.keys(outages))(
    'delivers what waited for a receiver that %s for 60 s once it is back, without waiting for the retries scheduled',
    async (outage) => {
      const { down, up } = outages[outage] as (typeof outages)[string];
      const service = await serviceWith([5_000, 300_000, 1_800_000], () => ({ status: 204 }));
      await service.createSteadily(4, 20);
      await service.runUntilDelivered(1_000);
      await down(service);
      // 120 creates in 60 s: each one tried failed, most twice, their next retry 5 minutes on.
      await service.createSteadily(120, 2);
      expect(service.deliveredAt.size).toBe(4);
      const backAt = service.clock.now();
      await up(service);
      await service.runUntilDelivered(30_000);
      const lastDelivered = Math.max(...service.deliveredAt.values());
      // The longest congestion pause (10 s) at most, then what waited goes at once.
      expect(lastDelivered - backAt).toBeLessThanOrEqual(10_000 + MARGIN_MS);
    },
    120_000,
  );
});
