/**
 * What is read and written as JSON text without the schemas: a stored plant's text read back, each
 * event type's data and each payload format's body. A store serializes a plant once (plantJson),
 * writes its event's data from that text in the plant's own transaction, and every delivery's body
 * is made from the data without parsing or serializing it again. Free of zod, so that the embedded
 * store's database thread can import it (`@org/plant-contract/json-text`) and stay quick to start.
 * webhook-events.test.ts holds every type and format to the JSON of the catalogue's objects
 * (`dataOf`, `webhookEventBody`).
 */
import { parseExactJson } from './exact-json.ts';
import type { NewPlant } from './schemas.ts';
import type { StoredPlant } from './stored-plant.ts';
import type { WebhookEventType, WebhookPayloadFormat } from './webhook-events.ts';

/** The inverse of plantJson: the stored plant its text holds. */
export const parsePlantJson = (text: string): StoredPlant => {
  const plant = parseExactJson(text) as NewPlant;
  return { ...plant, id: BigInt(plant.id) };
};

/** The event's data as JSON text, from its plant's text (plantJson) and the plant's id. */
export type EventDataJson = (plantJson: string, id: bigint) => string;

/** Every type's data as text: a type of WEBHOOK_EVENTS missing here fails typecheck. */
export const WEBHOOK_EVENT_DATA_JSON = {
  newPlant: (plantJson) => plantJson,
  plantDeleted: (plantJson, id) => `{"id":${id},"plant":${plantJson}}`,
} as const satisfies Record<WebhookEventType, EventDataJson>;

/** Every payload format's body as text, given the event's type, its data as text and when it was announced. */
export const PAYLOAD_FORMAT_JSON = {
  plain: (_type, data, _at) => data,
  // The type is one of the catalogue's names, which JSON writes as they are.
  standard: (type, data, at) => `{"type":"${type}","timestamp":"${at.toISOString()}","data":${data}}`,
} as const satisfies Record<WebhookPayloadFormat, (type: WebhookEventType, data: string, at: Date) => string>;

/**
 * A delivery's body as text: the event's `data` (as WEBHOOK_EVENT_DATA_JSON writes it) in
 * `payloadFormat`, timestamped `at`, when the event was announced, for `standard`.
 */
export const webhookEventJson = (
  type: WebhookEventType,
  payloadFormat: WebhookPayloadFormat,
  data: string,
  at: Date,
): string => PAYLOAD_FORMAT_JSON[payloadFormat](type, data, at);
