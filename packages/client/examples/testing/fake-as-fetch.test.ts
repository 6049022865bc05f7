import { ConflictError, createPlantClient, type PlantClient } from '@org/plant-client';
import { createPlantStoreFake } from '@org/plant-client/testing';
import { expect, it } from 'vitest';

// The code under test: files a plant under the id the caller chose, once.
const fileFern = async (plants: PlantClient, id: bigint) => {
  try {
    await plants.createPlant({ id, name: 'Fern', tag: 'fern' });
    return 'filed';
  } catch (error) {
    if (ConflictError.isInstance(error)) return 'taken';
    throw error;
  }
};

it('files a plant once; another plant under the id is taken', async () => {
  const fake = createPlantStoreFake({ tokens: ['test-token'], plants: [{ id: 2, name: 'Ivy' }] });
  const plants = createPlantClient({ baseUrl: 'https://plants.test', token: 'test-token', fetch: fake.fetch });

  expect(await fileFern(plants, 1n)).toBe('filed');
  expect(await fileFern(plants, 1n)).toBe('filed'); // a replay of the same plant succeeds again
  expect(await fileFern(plants, 2n)).toBe('taken');
  expect(fake.plants).toStrictEqual([
    { id: 1, name: 'Fern', tag: 'fern' },
    { id: 2, name: 'Ivy' },
  ]);
});
