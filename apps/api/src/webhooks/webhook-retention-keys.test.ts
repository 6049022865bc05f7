import { IDEMPOTENCY_KEY_TTL_MS } from '@org/plant-contract';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { fakeStore } from '../testing/fake-store.ts';
import { manualClock } from '../testing/manual-clock.ts';
import { until } from '../testing/until.ts';
import { PRUNE_BATCH, startWebhookRetention } from './webhook-retention.ts';

describe('webhook retention of Idempotency-Keys', () => {
  it('deletes the keys claimed more than 24 hours ago, in batches, whatever the deliveries’ retention', async () => {
    const clock = manualClock();
    const { webhooks } = fakeStore();
    const batches = [PRUNE_BATCH, 3];
    const pruneIdempotencyKeys = vi.fn(async () => batches.shift() ?? 0);
    const retention = startWebhookRetention({
      store: { ...webhooks, pruneIdempotencyKeys },
      retentionMs: 3_600_000,
      logger: pino({ enabled: false }),
      clock,
    });
    // The first check runs at start.
    await clock.advance(0);
    await until(
      async () => pruneIdempotencyKeys.mock.calls.length,
      (calls) => calls === 2,
    );
    await retention.stop();
    expect(pruneIdempotencyKeys.mock.calls).toStrictEqual([
      [new Date(clock.now() - IDEMPOTENCY_KEY_TTL_MS), PRUNE_BATCH],
      [new Date(clock.now() - IDEMPOTENCY_KEY_TTL_MS), PRUNE_BATCH],
    ]);
  });
});
