import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import { until } from '#test/until';
import { callApi, listDeliveries, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

/** The webhook-id of each delivery the receiver got, in order. */
const webhookIds = (received: { headers: Record<string, unknown> }[]): string[] =>
  received.map(({ headers }) => headers['webhook-id'] as string);

// Standard Webhooks receivers deduplicate on webhook-id: an id issued twice drops a plant.
describe('webhook ids', () => {
  it('are never issued twice, however often the endpoint is deleted and registered again', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const receiver = await deferredReceiver(defer);
    for (let round = 1; round <= 3; round++) {
      const endpoint = await registerEndpoint(service.base, receiver.url);
      expect((await postPlant(service.base, TEST_TOKEN, { id: BigInt(round), name: `Plant ${round}` })).status).toBe(
        200,
      );
      await receiver.waitFor(round);
      expect((await callApi(service.base, `/webhooks/${endpoint.id}`, { method: 'DELETE' })).status).toBe(204);
    }
    const ids = webhookIds(receiver.received);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });

  it('are never issued twice after retention emptied the outbox', async () => {
    const service = await startWebhookService({ retentionMs: 1_000 });
    defer(service.cleanup);
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(service.base, receiver.url);
    for (let round = 1; round <= 2; round++) {
      expect((await postPlant(service.base, TEST_TOKEN, { id: BigInt(round), name: `Plant ${round}` })).status).toBe(
        200,
      );
      await receiver.waitFor(round);
      // Pruned once delivered and the retention has passed: the outbox is empty again.
      await until(
        () => listDeliveries<{ id: string }>(service.base, endpoint.id),
        (deliveries) => deliveries.length === 0,
      );
    }
    const ids = webhookIds(receiver.received);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
  });
});
