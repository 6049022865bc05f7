export type { ApiError, NewPlant, Plant, PlantWithId } from '@org/plant-contract';
export { PlantApiError, PlantClientError, PlantConnectionError, PlantTimeoutError } from './errors.ts';
export type { FetchLike } from './fetcher.ts';
export {
  createPlantClient,
  DEFAULT_TIMEOUT_MS,
  type ListPlantsOptions,
  type PlantClient,
  type PlantClientOptions,
  type RequestOptions,
} from './plant-client.ts';
