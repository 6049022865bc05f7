import { parseExactJson } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import { until } from '#test/until';
import { callApi, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();
const receiver = () => deferredReceiver(defer);

type Delivery = { id: string; status: string };

const deliveries = async (base: string, id: string): Promise<Delivery[]> =>
  parseExactJson(await (await callApi(base, `/webhooks/${id}/deliveries`)).text()) as Delivery[];

describe('webhook retention', () => {
  it('deletes delivered and failed deliveries once the retention has passed', async () => {
    const service = await startWebhookService({ retentionMs: 1_000, retryDelaysMs: [] });
    defer(service.cleanup);
    const healthy = await receiver();
    const failing = await receiver();
    failing.answer({ status: 500 });
    const delivered = await registerEndpoint(service.base, healthy.url);
    const failed = await registerEndpoint(service.base, failing.url);
    for (let id = 1n; id <= 3n; id++) {
      expect((await postPlant(service.base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
    }
    const finishedAt = Date.now();
    expect(
      (
        await until(
          () => deliveries(service.base, delivered.id),
          (list) => list.length === 3 && list.every((d) => d.status === 'delivered'),
        )
      ).map((d) => d.status),
    ).toStrictEqual(['delivered', 'delivered', 'delivered']);
    expect(
      (
        await until(
          () => deliveries(service.base, failed.id),
          (list) => list.length === 3 && list.every((d) => d.status === 'failed'),
        )
      ).length,
    ).toBe(3);

    // Checked every min(retention, 1 h): gone within a check or two after the retention ran out.
    await until(
      () => deliveries(service.base, delivered.id),
      (list) => list.length === 0,
    );
    await until(
      () => deliveries(service.base, failed.id),
      (list) => list.length === 0,
    );
    expect(Date.now() - finishedAt).toBeGreaterThanOrEqual(1_000);
    expect(healthy.received).toHaveLength(3);
  });
});
