import type { StoredPlant } from '@org/plant-contract';
import type { RequestStore } from './request-store.ts';
import type { WebhookStore } from './webhook-store.ts';

/** A plant as stored: the contract's, its id always a bigint so that every int64 is exact. */
export type { StoredPlant };

export type CreateOutcome =
  | { outcome: 'created'; plant: StoredPlant }
  | { outcome: 'replayed'; plant: StoredPlant }
  | { outcome: 'conflict'; existing: StoredPlant };

export type ListOptions = {
  /** Only plants with an id greater than this (the cursor of the previous page). */
  after?: bigint;
  /** At most this many plants. */
  limit: number;
  /** Only plants with exactly this tag. */
  tag?: string;
  /**
   * Fewer plants once their JSON text (plantJson) holds this many bytes (UTF-8): the list ends one
   * plant after the first that brings them to it (which tells whether a page ending there has a next).
   */
  maxBytes?: number;
};

/**
 * Durable plant storage. Writes resolve only once durable. `create` is idempotent by id: the same
 * plant again is `replayed`, different data under a stored id is a `conflict`. A `created` plant is
 * announced to every enabled webhook endpoint in the same transaction (see `webhooks`).
 */
export interface PlantStore {
  /** Webhook endpoints and the outbox of announcements. */
  readonly webhooks: WebhookStore;
  /** Idempotency-Keys and test-delivery windows: what is kept about requests (see request-store.ts). */
  readonly requests: RequestStore;
  create(plant: StoredPlant): Promise<CreateOutcome>;
  get(id: bigint): Promise<StoredPlant | undefined>;
  /** Plants ordered by id ascending, at most `limit` (and see `maxBytes`). */
  list(options: ListOptions): Promise<StoredPlant[]>;
  /** Removes the plant; resolves false when there was none. Afterwards the id may be created again. */
  delete(id: bigint): Promise<boolean>;
  /** Resolves when the store can serve requests; rejects with StoreUnavailableError otherwise. */
  health(): Promise<void>;
  /**
   * False while the store is down and cannot serve until it is started again (the embedded
   * store's database thread, restarting): /healthz fails meanwhile.
   */
  alive(): boolean;
  close(): Promise<void>;
}

/** The store cannot serve now (disk full, database down); the request may be retried later. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}
