import { createPlantStoreFake } from '@org/plant-client/testing';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { sendFakeDeliveries } from '#test/fake-deliveries';
import { serveFake } from '#test/fake-server';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import { callApi, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

/** The service (the embedded store and its delivery loop), at `base`. */
const service = async (): Promise<string> => {
  const started = await startWebhookService();
  defer(started.cleanup);
  return started.base;
};

/** @org/plant-client/testing's fake over HTTP, its recorded deliveries sent as a receiver team sends them. */
const fake = async (): Promise<string> => {
  const plantStore = createPlantStoreFake({ allowPrivateWebhooks: true });
  const { server, url } = await serveFake(plantStore);
  const stopSending = sendFakeDeliveries(plantStore);
  defer(async () => {
    await stopSending();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return url;
};

/**
 * What an endpoint in each payload format, subscribed to every event type, receives when a plant
 * is created then deleted: each delivery's event type header and body, the standard body's
 * timestamp (when the event was announced, which differs between two runs) checked and set aside.
 */
const bodiesFor = async (base: string) => {
  const plain = await deferredReceiver(defer);
  const standard = await deferredReceiver(defer);
  const eventTypes = ['newPlant', 'plantDeleted'];
  await registerEndpoint(base, plain.url, { eventTypes });
  await registerEndpoint(base, standard.url, { eventTypes, payloadFormat: 'standard' });
  const id = 9007199254740993n;
  expect((await postPlant(base, TEST_TOKEN, { id, name: 'Fern', tag: 'shade' })).status).toBe(200);
  await Promise.all([plain.waitFor(1), standard.waitFor(1)]);
  expect((await callApi(base, `/plants/${id}`, { method: 'DELETE' })).status).toBe(204);
  const received = await Promise.all([plain.waitFor(2), standard.waitFor(2)]);
  return received.flat().map(({ headers, body }) => ({
    type: headers['webhook-event-type'],
    contentType: headers['content-type'],
    body: body.replace(/"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"/, '"timestamp":"<announced>"'),
  }));
};

describe('the fake and the service', () => {
  it('send the same delivery bodies, both events in both payload formats, for the same requests', async () => {
    const [fromService, fromFake] = await Promise.all([service().then(bodiesFor), fake().then(bodiesFor)]);
    const plant = '{"id":9007199254740993,"name":"Fern","tag":"shade"}';
    const deleted = `{"id":9007199254740993,"plant":${plant}}`;
    const json = 'application/json';
    expect(fromService).toStrictEqual([
      { type: 'newPlant', contentType: json, body: plant },
      { type: 'plantDeleted', contentType: json, body: deleted },
      {
        type: 'newPlant',
        contentType: json,
        body: `{"type":"newPlant","timestamp":"<announced>","data":${plant}}`,
      },
      {
        type: 'plantDeleted',
        contentType: json,
        body: `{"type":"plantDeleted","timestamp":"<announced>","data":${deleted}}`,
      },
    ]);
    expect(fromFake).toStrictEqual(fromService);
  });
});
