import { createPlantStoreFake } from '@org/plant-client/testing';
import { plantStoreHandlers } from '@org/plant-client/testing/msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

const baseUrl = 'https://plants.example.com';
const fake = createPlantStoreFake({ tokens: ['test-token'] });
const server = setupServer(...plantStoreHandlers(fake, { baseUrl }));

beforeAll(() => server.listen());
afterEach(() => fake.reset());
afterAll(() => server.close());

// The code under test calls the API with its own fetch, not the client.
const countFerns = async (): Promise<number> => {
  const response = await fetch(`${baseUrl}/plants?tag=fern`, { headers: { authorization: 'Bearer test-token' } });
  if (!response.ok) throw new Error(`The Plant Store answered ${response.status}.`);
  return ((await response.json()) as unknown[]).length;
};

it('counts the plants tagged fern', async () => {
  fake.seed([
    { id: 1, name: 'Fern', tag: 'fern' },
    { id: 2, name: 'Ivy', tag: 'ivy' },
  ]);
  expect(await countFerns()).toBe(1);
});

it('fails clearly when the service is unavailable', async () => {
  fake.fail({ type: 'unavailable' });
  await expect(countFerns()).rejects.toThrow('The Plant Store answered 503.');
});
