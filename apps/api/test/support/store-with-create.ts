import type { PlantStore } from '../../src/store/plant-store.ts';

/** `store` with its creates answered by `create` instead; every other operation is the store's own. */
export const withCreate = (store: PlantStore, create: PlantStore['create']): PlantStore => ({
  webhooks: store.webhooks,
  requests: store.requests,
  create,
  get: (id) => store.get(id),
  list: (options) => store.list(options),
  delete: (id) => store.delete(id),
  health: () => store.health(),
  alive: () => store.alive(),
  close: () => store.close(),
});
