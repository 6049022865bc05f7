import { contract } from '@org/plant-contract';
import { initServer } from '@ts-rest/express';
import { jsonBody } from '../http/json-body.ts';
import type { PlantStore, StoredPlant } from '../store/plant-store.ts';

const s = initServer();

/** The contract's Plant: name and tag, without the id (the interface does not list it). */
const toPlant = ({ name, tag }: StoredPlant) => (tag === undefined ? { name } : { name, tag });

export const createPlantsRouter = (store: PlantStore, bodyLimit?: number) =>
  s.router(contract, {
    createPlant: {
      middleware: jsonBody(bodyLimit),
      handler: async ({ body }) => {
        const plant: StoredPlant = { id: BigInt(body.id), name: body.name };
        if (body.tag !== undefined) plant.tag = body.tag;
        const result = await store.create(plant);
        if (result.outcome === 'conflict') {
          return {
            status: 409,
            body: { error: 409, message: `A plant with id ${plant.id} already exists with different data.` },
          };
        }
        return { status: 200, body: toPlant(result.plant) };
      },
    },
  });
