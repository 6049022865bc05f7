/** A plant as stored: the id is always a bigint so that every int64 is exact. */
export type StoredPlant = {
  id: bigint;
  name: string;
  tag?: string;
};

export type CreateOutcome =
  | { outcome: 'created'; plant: StoredPlant }
  | { outcome: 'replayed'; plant: StoredPlant }
  | { outcome: 'conflict'; existing: StoredPlant };

/**
 * Durable plant storage. `create` resolves only once the plant is durable, and is idempotent by id:
 * the same plant again is `replayed`, different data under a stored id is a `conflict`.
 */
export interface PlantStore {
  create(plant: StoredPlant): Promise<CreateOutcome>;
  get(id: bigint): Promise<StoredPlant | undefined>;
  /** Resolves when the store can serve requests; rejects with StoreUnavailableError otherwise. */
  health(): Promise<void>;
  close(): Promise<void>;
}

/** The store cannot serve now (disk full, database down); the request may be retried later. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

export const samePlant = (a: StoredPlant, b: StoredPlant): boolean =>
  a.id === b.id && a.name === b.name && a.tag === b.tag;
