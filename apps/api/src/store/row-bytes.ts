/**
 * What the answers whose size a client chooses (lists) can weigh, in bytes: the answer budget
 * (http/answer-budget.ts) and the SQLite thread's batches count them, so that memory is bounded by
 * bytes rather than by a number of requests.
 */
import {
  PLANT_JSON_MAX_BYTES,
  plantJson,
  WEBHOOK_DESCRIPTION_MAX_LENGTH,
  WEBHOOK_ENDPOINTS_MAX,
  WEBHOOK_URL_MAX_LENGTH,
} from '@org/plant-contract';
import type { ListOptions, StoredPlant } from './plant-store.ts';

/** The most bytes a plant's JSON text takes, derived from the contract's bounds. */
export const MAX_PLANT_BYTES = PLANT_JSON_MAX_BYTES;

/** The bytes of a plant's JSON text (plantJson), as ListOptions.maxBytes counts them. */
export const plantBytes = (plant: StoredPlant): number => Buffer.byteLength(plantJson(plant));

/** The bytes a list of plants can hold at most: `limit` plants, or `maxBytes` and the two plants past it. */
export const listBytes = ({ limit, maxBytes = Number.POSITIVE_INFINITY }: ListOptions): number =>
  Math.min(limit * MAX_PLANT_BYTES, maxBytes + 2 * MAX_PLANT_BYTES);

/**
 * A listed delivery's bytes at most, as a thread holds it: a row of ten columns, its webhook-id,
 * and an error message the service wrote (see PostOutcome): no text of a client's.
 */
export const DELIVERY_ROW_BYTES = 1024;

/**
 * An endpoint's bytes at most: its URL as stored (percent-encoded, 12 bytes for a four-byte
 * character), its description in four-byte characters, and the rest of its row.
 */
export const MAX_ENDPOINT_BYTES = 12 * WEBHOOK_URL_MAX_LENGTH + 4 * WEBHOOK_DESCRIPTION_MAX_LENGTH + 512;

/** The bytes of every endpoint at most (GET /webhooks): 2.5 MiB. */
export const ENDPOINTS_BYTES = WEBHOOK_ENDPOINTS_MAX * MAX_ENDPOINT_BYTES;

/** The bytes an endpoint takes, as ENDPOINTS_BYTES counts them. */
export const endpointBytes = ({ url, description }: { url: string; description?: string | undefined }): number =>
  Buffer.byteLength(url) + (description === undefined ? 0 : Buffer.byteLength(description)) + 512;
