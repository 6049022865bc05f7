import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PlantConnectionError } from '../errors.ts';
import { createPlantClient } from '../plant-client.ts';
import { plantStoreHandlers } from './msw-handlers.ts';
import { createPlantStoreFake } from './plant-store-fake.ts';

const BASE_URL = 'https://plants.example.com/api';
const TOKEN = 'msw-token-0123456789';
const fake = createPlantStoreFake({ tokens: [TOKEN] });
// A second fake under a base URL written with trailing slashes, its test deliveries failing.
const broken = createPlantStoreFake({
  tokens: [TOKEN],
  sendTestDelivery: () => Promise.reject(new Error('the receiver adapter broke')),
});
const server = setupServer(
  ...plantStoreHandlers(fake, { baseUrl: BASE_URL }),
  ...plantStoreHandlers(broken, { baseUrl: 'https://plants.example.com/v2//' }),
);

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  fake.reset();
  broken.reset();
});
afterAll(() => server.close());

describe('plantStoreHandlers', () => {
  it("answers the global fetch under the base URL's path as the fake does", async () => {
    const client = createPlantClient({ baseUrl: BASE_URL, token: TOKEN });
    expect(await client.createPlant({ id: 9007199254740993n, name: 'Big' })).toStrictEqual({ name: 'Big' });
    const listed = await fetch(`${BASE_URL}/plants`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await listed.text()).toBe('[{"id":9007199254740993,"name":"Big"}]');
    const unauthenticated = await fetch(`${BASE_URL}/plants`);
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
    expect((await fetch(`${BASE_URL}/nowhere`)).status).toBe(404);
  });

  it('turns a dropped connection into a network error, and a lost answer too, after the write', async () => {
    const client = createPlantClient({ baseUrl: BASE_URL, token: TOKEN, maxRetries: 0 });
    fake.fail({ type: 'connection-error' });
    await expect(client.createPlant({ id: 1, name: 'Fern' })).rejects.toSatisfy(PlantConnectionError.isInstance);
    expect(fake.plants).toStrictEqual([]);
    fake.fail({ type: 'lost-answer' });
    await expect(client.createPlant({ id: 1, name: 'Fern' })).rejects.toSatisfy(PlantConnectionError.isInstance);
    expect(fake.plants).toStrictEqual([{ id: 1, name: 'Fern' }]);
  });

  it('takes a base URL with trailing slashes, and answers an error of the fake other than a lost connection 500', async () => {
    const client = createPlantClient({ baseUrl: 'https://plants.example.com/v2', token: TOKEN, maxRetries: 0 });
    const { id } = await client.createWebhook({ url: 'https://hooks.example.com/plants' });
    const tested = await fetch(`https://plants.example.com/v2/webhooks/${id}/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(tested.status).toBe(500);
  });
});
