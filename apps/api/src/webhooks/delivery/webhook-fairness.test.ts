import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { percentile, sendSteadily } from '#test/steady-sends';
import { TEST_TOKEN } from '#test/test-server';
import type { ReceivedWebhook, WebhookReceiver } from '#test/webhook-receiver';
import { registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();
const receiver = () => deferredReceiver(defer);

/** Creates `count` plants at `perSecond`, each timed from the moment it is sent; resolves with the send times by id. */
const createSteadily = async (base: string, count: number, perSecond: number): Promise<Map<number, number>> => {
  const sentAt = new Map<number, number>();
  await sendSteadily(count, perSecond, Date.now, sentAt, (id) =>
    postPlant(base, TEST_TOKEN, { id: BigInt(id), name: `Plant ${id}` }).then((answer) =>
      expect(answer.status).toBe(200),
    ),
  );
  return sentAt;
};

/** How long after its create each plant reached the receiver, shortest first. */
const latencies = (received: ReceivedWebhook[], sentAt: Map<number, number>): number[] =>
  received
    .map(({ body, receivedAt }) => receivedAt - (sentAt.get((JSON.parse(body) as { id: number }).id) ?? 0))
    .sort((a, b) => a - b);

const describeLatencies = (sorted: number[]) =>
  `p50 ${percentile(sorted, 0.5)} ms, p99 ${percentile(sorted, 0.99)} ms, max ${percentile(sorted, 1)} ms`;

/** The service with `hangingCount` receivers that never answer, then a healthy one, each registered. */
const serviceBesideHanging = async (timeoutMs: number, hangingCount: number) => {
  const service = await startWebhookService({ timeoutMs });
  defer(service.cleanup);
  const hanging = await Promise.all(Array.from({ length: hangingCount }, () => receiver()));
  for (const each of hanging) {
    each.answer('hang');
    await registerEndpoint(service.base, each.url);
  }
  const healthy = await receiver();
  await registerEndpoint(service.base, healthy.url);
  return { base: service.base, hanging, healthy };
};

/** The healthy receiver's deliveries of `count` creates, latencies logged under `label`, shortest first. */
const deliverSteadily = async (
  { base, healthy }: { base: string; healthy: WebhookReceiver },
  count: number,
  perSecond: number,
  label: string,
) => {
  const sentAt = await createSteadily(base, count, perSecond);
  const received = await healthy.waitFor(count, 20_000);
  const sorted = latencies(received, sentAt);
  console.log(`${label}, ${count} creates at ${perSecond}/s: delivery latency ${describeLatencies(sorted)}`);
  expect(new Set(received.map(({ body }) => body)).size).toBe(count);
  return sorted;
};

describe('fairness across receivers', () => {
  it('delivers to a healthy receiver soon after each create while another receiver hangs', async () => {
    const service = await serviceBesideHanging(10_000, 1);

    // 100 creates a second for 3 seconds.
    const sorted = await deliverSteadily(service, 300, 100, 'healthy receiver beside a hanging one');
    // The target is 1 s at p99 (see the log line); the bound is generous so that a busy machine
    // cannot fail it. Without a per-endpoint limit, 15 of 300 arrived within 5 s.
    expect(percentile(sorted, 0.99)).toBeLessThan(4_000);
    // The hanging receiver never answered: it holds the one attempt a new endpoint starts with.
    expect(service.hanging[0]?.mostAtOnce()).toBe(1);
  }, 60_000);

  it.each([4, 16])(
    'delivers to a healthy receiver soon after each create while %i receivers hang',
    async (hangingCount) => {
      // Longer than the test: the hanging receivers' attempts never time out.
      const service = await serviceBesideHanging(60_000, hangingCount);

      // With 4 slots per endpoint of 16 in all, the hanging receivers held every slot until their
      // timeout, and the healthy one got nothing meanwhile.
      const sorted = await deliverSteadily(service, 100, 50, `healthy receiver beside ${hangingCount} hanging ones`);
      // The target is 1 s at p99; generous for a busy machine, far below the hanging attempts' timeout.
      expect(percentile(sorted, 0.99)).toBeLessThan(4_000);
      for (const each of service.hanging) expect(each.mostAtOnce()).toBe(1);
    },
    60_000,
  );
});
