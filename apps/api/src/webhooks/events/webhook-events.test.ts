import { verifyPlantWebhookEvent } from '@org/plant-client/webhooks';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import type { ReceivedWebhook } from '#test/webhook-receiver';
import { callApi, listDeliveries, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

const deletePlant = async (base: string, id: bigint) =>
  (await callApi(base, `/plants/${id}`, { method: 'DELETE' })).status;

const patch = (base: string, id: string, body: unknown) =>
  callApi(base, `/webhooks/${id}`, { method: 'PATCH', body: JSON.stringify(body) });

/** What a receiver got, verified with its secret and typed. */
const eventsOf = (received: ReceivedWebhook[], secret: string) =>
  received.map(({ body, headers }) => verifyPlantWebhookEvent(secret, body, headers));

describe('webhook event types', () => {
  it('delivers a deletion once, signed, to the endpoints subscribed to plantDeleted only', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const everything = await deferredReceiver(defer);
    const creations = await deferredReceiver(defer);
    const all = await registerEndpoint(service.base, everything.url, { eventTypes: ['newPlant', 'plantDeleted'] });
    const onlyNew = await registerEndpoint(service.base, creations.url);
    const id = 9007199254740993n;
    expect((await postPlant(service.base, TEST_TOKEN, { id, name: 'Fern', tag: 'shade' })).status).toBe(200);
    await everything.waitFor(1);
    expect(await deletePlant(service.base, id)).toBe(204);
    // A deletion that finds nothing announces nothing.
    expect(await deletePlant(service.base, id)).toBe(404);
    // Delivered before the next create is announced: deliveries to one endpoint may overtake each other.
    await everything.waitFor(2);
    expect((await postPlant(service.base, TEST_TOKEN, { id: 2n, name: 'Moss' })).status).toBe(200);
    await everything.waitFor(3);
    await creations.waitFor(2);

    const deletion = everything.received[1];
    expect(deletion?.body).toBe('{"id":9007199254740993,"plant":{"id":9007199254740993,"name":"Fern","tag":"shade"}}');
    expect(() => new Webhook(all.secret).verify(deletion?.body ?? '', deletion?.headers as never)).not.toThrow();
    expect(eventsOf(everything.received, all.secret)).toStrictEqual([
      { type: 'newPlant', plant: { id, name: 'Fern', tag: 'shade' } },
      { type: 'plantDeleted', id, plant: { id, name: 'Fern', tag: 'shade' } },
      { type: 'newPlant', plant: { id: 2n, name: 'Moss' } },
    ]);
    expect(new Set(everything.received.map(({ headers }) => headers['webhook-id'])).size).toBe(3);
    // Listed with their event types, newest first, each under the webhook-id it was sent with.
    const listed = await listDeliveries<{ id: string; type: string }>(service.base, all.id);
    expect(listed.map(({ id: webhookId, type }) => [webhookId, type])).toStrictEqual(
      [...everything.received].reverse().map(({ headers }) => [headers['webhook-id'], headers['webhook-event-type']]),
    );
    expect(listed.map(({ type }) => type)).toStrictEqual(['newPlant', 'plantDeleted', 'newPlant']);
    // The endpoint that did not ask for deletions: the two creations, bodies as they always were.
    expect(creations.received.map(({ body }) => body)).toStrictEqual([
      '{"id":9007199254740993,"name":"Fern","tag":"shade"}',
      '{"id":2,"name":"Moss"}',
    ]);
    expect(eventsOf(creations.received, onlyNew.secret).map(({ type }) => type)).toStrictEqual([
      'newPlant',
      'newPlant',
    ]);
  });

  it('answers the types, newPlant by default, and applies a change to the events announced after it', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint<{ id: string; secret: string; eventTypes: string[] }>(
      service.base,
      receiver.url,
    );
    expect(endpoint.eventTypes).toStrictEqual(['newPlant']);
    expect((await postPlant(service.base, TEST_TOKEN, { id: 1n, name: 'Fern' })).status).toBe(200);
    await receiver.waitFor(1);
    expect(await deletePlant(service.base, 1n)).toBe(204);

    const changed = await patch(service.base, endpoint.id, { eventTypes: ['plantDeleted'] });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ id: endpoint.id, eventTypes: ['plantDeleted'] });
    const listed = await (await callApi(service.base, `/webhooks/${endpoint.id}`)).json();
    expect(listed).toMatchObject({ eventTypes: ['plantDeleted'] });
    expect((await postPlant(service.base, TEST_TOKEN, { id: 2n, name: 'Moss' })).status).toBe(200);
    expect(await deletePlant(service.base, 2n)).toBe(204);
    await receiver.waitFor(2);
    // Announced before the change: the creation of 1 (its deletion was not subscribed then); after
    // it: the deletion of 2, not its creation.
    expect(eventsOf(receiver.received, endpoint.secret)).toStrictEqual([
      { type: 'newPlant', plant: { id: 1n, name: 'Fern' } },
      { type: 'plantDeleted', id: 2n, plant: { id: 2n, name: 'Moss' } },
    ]);
  });

  it('sends the Standard Webhooks structure to an endpoint that asks for it, verified by standardwebhooks', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint<{ id: string; secret: string; payloadFormat: string }>(
      service.base,
      receiver.url,
      { eventTypes: ['newPlant', 'plantDeleted'], payloadFormat: 'standard' },
    );
    expect(endpoint.payloadFormat).toBe('standard');
    expect((await postPlant(service.base, TEST_TOKEN, { id: 3n, name: 'Ivy', tag: 'climbing' })).status).toBe(200);
    await receiver.waitFor(1);
    expect(await deletePlant(service.base, 3n)).toBe(204);
    await receiver.waitFor(2);
    const timestamp = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(
      receiver.received.map(({ body, headers }) => new Webhook(endpoint.secret).verify(body, headers as never)),
    ).toStrictEqual([
      { type: 'newPlant', timestamp, data: { id: 3, name: 'Ivy', tag: 'climbing' } },
      { type: 'plantDeleted', timestamp, data: { id: 3, plant: { id: 3, name: 'Ivy', tag: 'climbing' } } },
    ]);
    expect(eventsOf(receiver.received, endpoint.secret).map(({ type }) => type)).toStrictEqual([
      'newPlant',
      'plantDeleted',
    ]);
    // Back to the plain body for the events announced after the change.
    const changed = await patch(service.base, endpoint.id, { payloadFormat: 'plain' });
    expect(await changed.json()).toMatchObject({ payloadFormat: 'plain' });
    expect((await postPlant(service.base, TEST_TOKEN, { id: 4n, name: 'Sage' })).status).toBe(200);
    await receiver.waitFor(3);
    expect(receiver.received[2]?.body).toBe('{"id":4,"name":"Sage"}');
  });

  it.each([
    ['an empty list', [], 'eventTypes must list at least one event type'],
    ['an unknown type', ['plantUpdated'], 'eventTypes.0 must be one of newPlant, plantDeleted'],
  ])('refuses %s with 400, naming the field, at creation and in a PATCH', async (_, eventTypes, message) => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const body = JSON.stringify({ url: 'https://hooks.example.com/a', eventTypes });
    const created = await callApi(service.base, '/webhooks', { method: 'POST', body });
    expect(created.status).toBe(400);
    expect(await created.json()).toStrictEqual({ error: 400, message: expect.stringContaining(message) });
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(service.base, receiver.url);
    const changed = await patch(service.base, endpoint.id, { eventTypes });
    expect(changed.status).toBe(400);
    expect(await changed.json()).toStrictEqual({ error: 400, message: expect.stringContaining(message) });
  });
});
