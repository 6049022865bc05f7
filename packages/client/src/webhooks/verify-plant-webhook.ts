import {
  type NewPlant,
  parseExactJson,
  type StoredPlant,
  toStoredPlant,
  unknownEventType,
  WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_EVENTS,
  WebhookEventType,
} from '@org/plant-contract';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { z } from 'zod';
import { PlantClientError } from '../errors.ts';

/** How far a delivery's webhook-timestamp may be from this clock (Standard Webhooks' tolerance). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

const VERIFICATION_ERROR = Symbol.for('@org/plant-client/PlantWebhookVerificationError');

/** Why a delivery was refused. */
export type PlantWebhookFailure =
  /** webhook-id, webhook-timestamp or webhook-signature is missing or malformed. */
  | 'headers'
  /** The timestamp is more than five minutes off: too old (a replay?) or too new. */
  | 'timestamp'
  /** No v1 signature matches the body under this secret. */
  | 'signature'
  /** The secret is not `whsec_` and base64. */
  | 'secret'
  /** Signed, but not a NewPlant (or, for verifyPlantWebhookEvent, not any event). */
  | 'body';

/** A delivery that must not be trusted: answer it with 4xx (not 410, which unsubscribes). */
export class PlantWebhookVerificationError extends PlantClientError {
  override name = 'PlantWebhookVerificationError';
  readonly [VERIFICATION_ERROR] = true;
  readonly reason: PlantWebhookFailure;

  constructor(reason: PlantWebhookFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.reason = reason;
  }

  static override isInstance(value: unknown): value is PlantWebhookVerificationError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[VERIFICATION_ERROR] === true
    );
  }
}

/** The plant a verified delivery announces, every field of the contract's; its id is always an exact bigint. */
export type PlantWebhook = StoredPlant;

/** Request headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

const NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature', WEBHOOK_EVENT_TYPE_HEADER] as const;

const headerValues = (headers: WebhookHeaders): Record<string, string> => {
  const values: Record<string, string> = {};
  if (typeof (headers as Headers).get === 'function') {
    for (const name of NAMES) {
      const value = (headers as Headers).get(name);
      if (value !== null) values[name] = value;
    }
    return values;
  }
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!(NAMES as readonly string[]).includes(lower) || value === undefined) continue;
    values[lower] = typeof value === 'string' ? value : value.join(' ');
  }
  return values;
};

const failureOf = (message: string): PlantWebhookFailure =>
  /timestamp too (old|new)/i.test(message)
    ? 'timestamp'
    : /missing|invalid signature headers/i.test(message)
      ? 'headers'
      : 'signature';

/** Verifies the signature and timestamp of a delivery → its body, parsed with exact integers. */
const verifiedBody = (
  secret: string | readonly string[],
  body: string | Uint8Array,
  headers: WebhookHeaders,
): { parsed: unknown; eventType: string | undefined } => {
  const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: false }).decode(body);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) {
    throw new PlantWebhookVerificationError('secret', 'At least one webhook secret is required.');
  }
  let webhooks: Webhook[];
  try {
    webhooks = secrets.map((each) => new Webhook(each));
  } catch (error) {
    throw new PlantWebhookVerificationError('secret', 'The webhook secret must be whsec_ followed by base64.', {
      cause: error,
    });
  }
  const values = headerValues(headers);
  const timestamp = values['webhook-timestamp'];
  if (timestamp !== undefined && !/^\d{1,12}$/.test(timestamp)) {
    throw new PlantWebhookVerificationError('headers', 'The webhook-timestamp header must be Unix seconds.');
  }
  // The first secret that verifies wins; a failure for every one is reported as the first one's.
  let failure: unknown;
  for (const webhook of webhooks) {
    try {
      webhook.verify(text, values, { jsonParse: false });
      failure = undefined;
      break;
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      failure ??= error;
    }
  }
  if (failure !== undefined) {
    const error = failure as WebhookVerificationError;
    const reason = failureOf(error.message);
    const message =
      reason === 'timestamp'
        ? `The webhook-timestamp is more than ${WEBHOOK_TOLERANCE_SECONDS / 60} minutes off.`
        : reason === 'headers'
          ? 'The webhook-id, webhook-timestamp and webhook-signature headers are required.'
          : `No webhook-signature matches the body under ${secrets.length === 1 ? 'this secret' : 'any of these secrets'}.`;
    throw new PlantWebhookVerificationError(reason, message, { cause: error });
  }
  try {
    return { parsed: parseExactJson(text), eventType: values[WEBHOOK_EVENT_TYPE_HEADER] };
  } catch (error) {
    throw new PlantWebhookVerificationError('body', 'The webhook body is not JSON.', { cause: error });
  }
};

/** The plant as verified, its id exact: every field of the schema. */
const toPlantWebhook = (plant: NewPlant): PlantWebhook => toStoredPlant(plant);

/**
 * Verifies a newPlant delivery by the Standard Webhooks scheme and returns the plant it
 * announces, its id exact. `body` must be the raw request body, byte for byte (not re-serialized
 * JSON), `secret` the `whsec_…` shown when the endpoint was registered — or a list of secrets
 * while rotating (the new one and the previous one): the delivery is accepted when any of its
 * signatures matches any of them. Throws
 * PlantWebhookVerificationError for a bad or missing signature, a timestamp more than five minutes
 * off, or a body that is not a plant. Deliveries are at least once: deduplicate on the
 * `webhook-id` header.
 */
export const verifyPlantWebhook = (
  secret: string | readonly string[],
  body: string | Uint8Array,
  headers: WebhookHeaders,
): PlantWebhook => {
  const plant = WEBHOOK_EVENTS.newPlant.data.safeParse(verifiedBody(secret, body, headers).parsed);
  if (!plant.success) {
    throw new PlantWebhookVerificationError('body', 'The webhook body is not a NewPlant.', { cause: plant.error });
  }
  return toPlantWebhook(plant.data);
};

/** A verified delivery of any event type, told apart by `type`. */
export type PlantWebhookEvent =
  /** A plant was created: the plant as stored. */
  | { type: 'newPlant'; plant: PlantWebhook }
  /** A plant was deleted: its id, and the plant as it was. */
  | { type: 'plantDeleted'; id: bigint; plant: PlantWebhook };

/** The structured body (Standard Webhooks), for endpoints that ask for it. */
const StructuredBody = z.object({ type: WebhookEventType, timestamp: z.string(), data: z.unknown() });

/** The event of `type` that `data` is, checked against the type's schema; undefined when it is not. */
const eventOf = (type: WebhookEventType, data: unknown): PlantWebhookEvent | undefined => {
  switch (type) {
    case 'newPlant': {
      const plant = WEBHOOK_EVENTS.newPlant.data.safeParse(data);
      return plant.success ? { type, plant: toPlantWebhook(plant.data) } : undefined;
    }
    case 'plantDeleted': {
      const deleted = WEBHOOK_EVENTS.plantDeleted.data.safeParse(data);
      return deleted.success
        ? { type, id: BigInt(deleted.data.id), plant: toPlantWebhook(deleted.data.plant) }
        : undefined;
    }
    default:
      return unknownEventType(type);
  }
};

/**
 * Verifies a delivery of any event type as verifyPlantWebhook does, and returns the event it
 * announces, in the plain body or the structured one (`{ type, timestamp, data }`). The type is
 * the structured body's, else the webhook-event-type header's; a plain body without the header
 * is a newPlant, the only event services before the header sent. Throws
 * PlantWebhookVerificationError as verifyPlantWebhook does, with `body` when the type is unknown,
 * the header and the body disagree, or the body is not the type's.
 */
export const verifyPlantWebhookEvent = (
  secret: string | readonly string[],
  body: string | Uint8Array,
  headers: WebhookHeaders,
): PlantWebhookEvent => {
  const { parsed, eventType } = verifiedBody(secret, body, headers);
  const structured = StructuredBody.safeParse(parsed);
  const type = structured.success ? structured.data.type : (eventType ?? 'newPlant');
  if (eventType !== undefined && eventType !== type) {
    throw new PlantWebhookVerificationError(
      'body',
      `The ${WEBHOOK_EVENT_TYPE_HEADER} header says ${JSON.stringify(eventType)}, but the body is a ${type} event.`,
    );
  }
  const named = WebhookEventType.safeParse(type);
  if (!named.success) {
    throw new PlantWebhookVerificationError('body', `The webhook event type ${JSON.stringify(type)} is unknown.`);
  }
  const event = eventOf(named.data, structured.success ? structured.data.data : parsed);
  if (event === undefined) {
    throw new PlantWebhookVerificationError('body', `The webhook body is not a ${named.data} event.`);
  }
  return event;
};
