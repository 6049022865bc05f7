import type { PlantStore } from '../store/plant-store.ts';

/** A store that holds nothing and accepts every create; override what a test needs. */
export const fakeStore = (overrides: Partial<PlantStore> = {}): PlantStore => ({
  create: async (plant) => ({ outcome: 'created', plant }),
  get: async () => undefined,
  list: async () => [],
  delete: async () => false,
  health: async () => {},
  close: async () => {},
  ...overrides,
});
