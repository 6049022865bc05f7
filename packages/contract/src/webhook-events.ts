/**
 * The catalogue of webhook events: each type's data and whether endpoints receive it by default,
 * with the body of a delivery in each payload format. Everything else derives from it (the
 * OpenAPI `webhooks`, the service's and the fake's delivery bodies, the client's verification), so
 * a new type is one entry here, and TypeScript names every place that handles types one by one
 * (the OpenAPI document's words for each, kept out of here: this module is in the client's
 * browser bundle).
 */
import { type ZodTypeAny, z } from 'zod';
import { Int64 } from './int64.ts';
import { NewPlant } from './schemas.ts';

/** The body of the plantDeleted webhook: the id of the deleted plant and the plant as it was. */
export const PlantDeleted = z.object({
  id: Int64.describe('Identification number of the deleted plant'),
  plant: NewPlant.describe('The plant as it was stored when it was deleted'),
});
export type PlantDeleted = z.infer<typeof PlantDeleted>;

/** The plant an event is about, as its announcer keeps it (an exact id: a number or a bigint). */
export type EventPlant = NewPlant;

type EventDefinition = {
  /** The event's data: the whole body in the plain format, `data` in the standard one. */
  data: ZodTypeAny;
  /** Whether an endpoint registered without `eventTypes` receives it. */
  subscribedByDefault: boolean;
  /**
   * The event's data about `plant`, before it is serialized (docs, fakes); the stores write it as
   * text once, by WEBHOOK_EVENT_DATA_JSON (json-text.ts), which must list every type.
   */
  dataOf(plant: EventPlant): object;
};

/** Every event type the service announces. */
export const WEBHOOK_EVENTS = {
  newPlant: {
    data: NewPlant,
    subscribedByDefault: true,
    // The plant as stored: the body receivers have always had.
    dataOf: (plant) => plant,
  },
  plantDeleted: {
    data: PlantDeleted,
    subscribedByDefault: false,
    dataOf: (plant) => ({ id: plant.id, plant }),
  },
} as const satisfies Record<string, EventDefinition>;

/** An event type: a key of WEBHOOK_EVENTS. */
export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;

/** The event types, in the catalogue's order. */
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as [WebhookEventType, ...WebhookEventType[]];

/** An event type an endpoint may receive. */
export const WebhookEventType = z
  .enum(WEBHOOK_EVENT_TYPES, { errorMap: () => ({ message: `must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` }) })
  .describe(`An event type, the name of its webhook: ${WEBHOOK_EVENT_TYPES.join(', ')}`);

/** What an endpoint receives when it does not say. */
export const WEBHOOK_EVENT_TYPES_DEFAULT: readonly WebhookEventType[] = WEBHOOK_EVENT_TYPES.filter(
  (type) => WEBHOOK_EVENTS[type].subscribedByDefault,
);

/**
 * A delivery's body in each payload format, given the event's type, its data and when it was
 * announced; PAYLOAD_FORMAT_JSON (json-text.ts) writes each as text and must list every format.
 */
const PAYLOAD_FORMATS = {
  plain: (_type: WebhookEventType, data: object, _at: Date): object => data,
  standard: (type: WebhookEventType, data: object, at: Date): object => ({ type, timestamp: at.toISOString(), data }),
};

/** How an endpoint's deliveries are shaped. */
export const WebhookPayloadFormat = z
  .enum(Object.keys(PAYLOAD_FORMATS) as [keyof typeof PAYLOAD_FORMATS, ...(keyof typeof PAYLOAD_FORMATS)[]], {
    errorMap: () => ({ message: 'must be plain or standard' }),
  })
  .describe(
    'The body of each delivery: plain, the event data alone (the plant for newPlant); standard, the Standard Webhooks structure { "type", "timestamp", "data" } with the same data',
  );
export type WebhookPayloadFormat = z.infer<typeof WebhookPayloadFormat>;

/**
 * What a delivery of `type` about `plant` says, before it is serialized, in `payloadFormat`
 * (Standard Webhooks' structure timestamped `at`, when the event was announced, for `standard`):
 * the service's deliveries, its test deliveries and the fake's are all this.
 */
export const webhookEventBody = (
  type: WebhookEventType,
  payloadFormat: WebhookPayloadFormat,
  plant: EventPlant,
  at: Date,
): object => PAYLOAD_FORMATS[payloadFormat](type, WEBHOOK_EVENTS[type].dataOf(plant), at);

/**
 * The header that names a delivery's event type. Not signed (Standard Webhooks signs the id, the
 * timestamp and the body): a verifier checks the body against the type's schema, and the types'
 * data are told apart by their fields.
 */
export const WEBHOOK_EVENT_TYPE_HEADER = 'webhook-event-type';

/** Fails typecheck where a switch over event types misses one; throws if an unknown value comes anyway. */
export const unknownEventType = (type: never): never => {
  throw new TypeError(`Unknown webhook event type ${JSON.stringify(type)}.`);
};
