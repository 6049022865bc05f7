import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { callApi, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

type Endpoint = { id: string; rateLimit?: number };

const patch = (base: string, id: string, body: unknown) =>
  callApi(base, `/webhooks/${id}`, { method: 'PATCH', body: JSON.stringify(body) });

const read = async (base: string, id: string): Promise<Endpoint> =>
  (await (await callApi(base, `/webhooks/${id}`)).json()) as Endpoint;

describe('webhook rate limits over HTTP', () => {
  it('answers the limit set at registration on every read, changes it with PATCH and removes it with null', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const limited = await registerEndpoint<Endpoint>(service.base, (await deferredReceiver(defer)).url, {
      rateLimit: 5,
    });
    const free = await registerEndpoint<Endpoint>(service.base, (await deferredReceiver(defer)).url);
    expect(limited.rateLimit).toBe(5);
    expect(free).not.toHaveProperty('rateLimit');
    expect(await read(service.base, limited.id)).toMatchObject({ id: limited.id, rateLimit: 5 });
    const listed = (await (await callApi(service.base, '/webhooks')).json()) as Endpoint[];
    expect(listed.map(({ id, rateLimit }) => ({ id, rateLimit }))).toStrictEqual([
      { id: limited.id, rateLimit: 5 },
      { id: free.id, rateLimit: undefined },
    ]);

    const raised = await patch(service.base, limited.id, { rateLimit: 1000 });
    expect(raised.status).toBe(200);
    expect(await raised.json()).toMatchObject({ id: limited.id, rateLimit: 1000 });
    expect(await read(service.base, limited.id)).toMatchObject({ rateLimit: 1000 });
    // A change of something else keeps the limit.
    expect(await (await patch(service.base, limited.id, { description: 'Rated' })).json()).toMatchObject({
      rateLimit: 1000,
    });
    const removed = await patch(service.base, limited.id, { rateLimit: null });
    expect(removed.status).toBe(200);
    expect(await removed.json()).not.toHaveProperty('rateLimit');
    expect(await read(service.base, limited.id)).not.toHaveProperty('rateLimit');
    const added = await patch(service.base, free.id, { rateLimit: 1 });
    expect(await added.json()).toMatchObject({ id: free.id, rateLimit: 1 });
  });

  it.each([
    ['zero', 0],
    ['a fraction', 2.5],
    ['more than the most', 1001],
    ['a string', '10'],
  ])('refuses %s with 400 naming the field, at registration and in a PATCH', async (_, rateLimit) => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const message = 'rateLimit must be a whole number from 1 to 1000';
    const body = JSON.stringify({ url: 'https://hooks.example.com/rated', rateLimit });
    const created = await callApi(service.base, '/webhooks', { method: 'POST', body });
    expect(created.status).toBe(400);
    expect(await created.json()).toStrictEqual({ error: 400, message: expect.stringContaining(message) });
    const endpoint = await registerEndpoint<Endpoint>(service.base, (await deferredReceiver(defer)).url);
    const changed = await patch(service.base, endpoint.id, { rateLimit });
    expect(changed.status).toBe(400);
    expect(await changed.json()).toStrictEqual({ error: 400, message: expect.stringContaining(message) });
    expect(await read(service.base, endpoint.id)).not.toHaveProperty('rateLimit');
  });

  it('refuses null at registration, where leaving the field out means no limit', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const body = JSON.stringify({ url: 'https://hooks.example.com/rated', rateLimit: null });
    const created = await callApi(service.base, '/webhooks', { method: 'POST', body });
    expect(created.status).toBe(400);
    expect(await created.json()).toStrictEqual({
      error: 400,
      message: expect.stringContaining('rateLimit must be a whole number from 1 to 1000'),
    });
  });
});
