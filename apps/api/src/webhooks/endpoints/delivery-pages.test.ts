import { createPlantClient } from '@org/plant-client';
import { describe, expect, it } from 'vitest';
import { deferCleanups } from '#test/cleanups';
import { expectError } from '#test/expect-error';
import { postPlant } from '#test/http-request';
import { conformingFetch } from '#test/openapi-conformance';
import { startTestServer, TEST_TOKEN } from '#test/test-server';
import { callApi, registerEndpoint } from '#test/webhook-service';

const defer = deferCleanups();

/** A service with one endpoint (whose receiver is never tried here) and `plants` plants announced to it. */
const withDeliveries = async (plants: number) => {
  const server = await startTestServer(undefined, { allowPrivateWebhooks: true });
  defer(server.cleanup);
  const endpoint = await registerEndpoint(server.url, 'http://127.0.0.1:9/hook');
  for (let id = 1n; id <= BigInt(plants); id += 1n) {
    expect((await postPlant(server.url, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
  }
  return { base: server.url, id: endpoint.id };
};

describe('GET /webhooks/{id}/deliveries, page by page', () => {
  it('continues through the Link header, newest first, until no link is given', async () => {
    const { base, id } = await withDeliveries(7);
    const pages: { plantId: number; id: string }[][] = [];
    let path: string | undefined = `/webhooks/${id}/deliveries?limit=3`;
    while (path !== undefined) {
      const answer = await callApi(base, path);
      expect(answer.status).toBe(200);
      pages.push((await answer.json()) as { plantId: number; id: string }[]);
      const link = answer.headers.get('link');
      if (link === null) path = undefined;
      else {
        expect(link).toMatch(/^<\?limit=3&before=msg_[0-9a-f]{16}_\d+>; rel="next"$/);
        path = `/webhooks/${id}/deliveries${/<([^>]*)>/.exec(link)?.[1]}`;
      }
    }
    expect(pages.map((page) => page.map(({ plantId }) => plantId))).toStrictEqual([[7, 6, 5], [4, 3, 2], [1]]);
  });

  it('announces no empty last page', async () => {
    const { base, id } = await withDeliveries(3);
    const answer = await callApi(base, `/webhooks/${id}/deliveries?limit=3`);
    expect(answer.headers.get('link')).toBeNull();
    expect(await answer.json()).toHaveLength(3);
  });

  it("is iterated to the end by the client's listWebhookDeliveries", async () => {
    const { base, id } = await withDeliveries(5);
    const client = createPlantClient({ baseUrl: base, token: TEST_TOKEN, fetch: conformingFetch });
    const plantIds: bigint[] = [];
    for await (const delivery of client.listWebhookDeliveries(id, { limit: 2 }))
      plantIds.push(BigInt(delivery.plantId));
    expect(plantIds).toStrictEqual([5n, 4n, 3n, 2n, 1n]);
    const first = await client.listWebhookDeliveries(id, { limit: 2 });
    const resumed = await client.listWebhookDeliveries(id, { cursor: first.nextCursor as string });
    expect(resumed.data.map(({ plantId }) => BigInt(plantId))).toStrictEqual([3n, 2n]);
  });

  it('answers 400 naming `before` when it is not the id of a delivery', async () => {
    const { base, id } = await withDeliveries(1);
    await expectError(await callApi(base, `/webhooks/${id}/deliveries?before=ep_1`), 400, /before/);
  });
});
