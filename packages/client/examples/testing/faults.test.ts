import { createPlantClient, RateLimitError } from '@org/plant-client';
import { createPlantStoreFake } from '@org/plant-client/testing';
import { afterEach, expect, it, vi } from 'vitest';

const setUp = (maxRetries?: number) => {
  const fake = createPlantStoreFake();
  const plants = createPlantClient({
    baseUrl: 'https://plants.test',
    token: 'test-token',
    fetch: fake.fetch,
    ...(maxRetries !== undefined && { maxRetries }),
  });
  return { fake, plants };
};

afterEach(() => {
  vi.useRealTimers();
});

it('waits out a 429 with Retry-After, then succeeds', async () => {
  vi.useFakeTimers();
  const { fake, plants } = setUp();
  fake.fail({ type: 'rate-limit', retryAfterSeconds: 2 });
  const created = plants.createPlant({ id: 1, name: 'Fern' });
  await vi.runAllTimersAsync();
  expect(await created).toStrictEqual({ name: 'Fern' });
});

it('stores a plant once when the answer to its creation was lost', async () => {
  vi.useFakeTimers();
  const { fake, plants } = setUp();
  fake.fail({ type: 'lost-answer' }, { route: 'createPlant' });
  const created = plants.createPlant({ id: 1, name: 'Fern' });
  await vi.runAllTimersAsync();
  expect(await created).toStrictEqual({ name: 'Fern' });
  expect(fake.plants).toStrictEqual([{ id: 1, name: 'Fern' }]);
});

it('gives up with a RateLimitError when no retry is allowed', async () => {
  const { fake, plants } = setUp(0);
  fake.fail({ type: 'rate-limit' }, { times: Number.POSITIVE_INFINITY });
  await expect(plants.listPlants()).rejects.toSatisfy(RateLimitError.isInstance);
});
