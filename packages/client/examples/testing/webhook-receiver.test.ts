import { createPlantClient } from '@org/plant-client';
import { createPlantStoreFake } from '@org/plant-client/testing';
import { verifyPlantWebhook } from '@org/plant-client/webhooks';
import { expect, it } from 'vitest';

// The receiver under test: answers 204 to a genuine newPlant delivery, 400 to anything else.
const receive = (secret: string, body: string, headers: Record<string, string>) => {
  try {
    const plant = verifyPlantWebhook(secret, body, headers);
    return { status: 204, plant };
  } catch {
    return { status: 400 };
  }
};

it('accepts the deliveries the service would send, and nothing tampered with', async () => {
  const fake = createPlantStoreFake();
  const plants = createPlantClient({ baseUrl: 'https://plants.test', token: 'test-token', fetch: fake.fetch });
  const { id, secret } = await plants.createWebhook({ url: 'https://receiver.example.com/plants' });
  await plants.createPlant({ id: 9007199254740993n, name: 'Fern' });

  const [delivery] = fake.deliveries(id);
  if (delivery === undefined) throw new Error('The fake recorded no delivery.');
  const { body, headers } = await fake.signDelivery(delivery);

  expect(receive(secret, body, headers)).toStrictEqual({ status: 204, plant: { id: 9007199254740993n, name: 'Fern' } });
  expect(receive(secret, body.replace('Fern', 'Weed'), headers)).toStrictEqual({ status: 400 });
});
