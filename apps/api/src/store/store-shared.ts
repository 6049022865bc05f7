/**
 * What both backends share: the bounds of the outbox's batches, the endpoint columns, and the rows
 * they read endpoints and deliveries as (PostgreSQL reads booleans and timestamps, SQLite integers).
 */
import { WEBHOOK_EVENT_TYPES_DEFAULT, type WebhookEventType, type WebhookPayloadFormat } from '@org/plant-contract';
import type {
  CreateEndpointOutcome,
  DeliveryStatus,
  NewStoredEndpoint,
  StoredDelivery,
  StoredEndpoint,
} from './webhook-store.ts';

/** Events fanned out per delivery claimed: fanning out keeps ahead of delivering. */
export const FAN_OUT_PER_CLAIMED = 8;

/**
 * The most delivery rows one fan-out writes: a few milliseconds of the database (measured in
 * webhook-stalls.test.ts), so that plant operations queued behind it never wait long.
 */
export const FAN_OUT_ROWS = 500;

/** Deliveries deleted per operation when an endpoint is deleted. */
export const DELETE_BATCH = 250;

/** Above every delivery's key (an int64): listing deliveries before it lists them from the newest. */
export const LAST_SEQ = 0x7fffffffffffffffn;

/** The columns an endpoint is read with (see EndpointRow). */
export const ENDPOINT_COLUMNS =
  'id, url, description, event_types, payload_format, rate_limit, enabled, disabled_reason, created_at, owner';

/** The event types an endpoint receives, as stored: comma-separated. */
export const storedEventTypes = (types: readonly WebhookEventType[]): string => types.join(',');

/** A time as a backend reads it: a Date from PostgreSQL, Unix milliseconds from SQLite. */
type StoredTime = Date | number | bigint;

const toDate = (time: StoredTime): Date => (time instanceof Date ? time : new Date(Number(time)));

export type EndpointRow = {
  id: string;
  url: string;
  description: string | null;
  event_types: string;
  payload_format: string;
  rate_limit: number | bigint | null;
  enabled: boolean | number | bigint;
  disabled_reason: string | null;
  created_at: StoredTime;
  owner: string;
};

export type DeliveryRow = {
  id: string;
  endpoint_id: string;
  type: string;
  plant_id: bigint;
  status: string;
  attempts: number | bigint;
  last_status: number | bigint | null;
  last_error: string | null;
  next_attempt_at: StoredTime | null;
  delivered_at: StoredTime | null;
  created_at: StoredTime;
};

/** What a registration stored, its defaults resolved. */
export type RegisteredFields = {
  id: string;
  url: string;
  description?: string | undefined;
  eventTypes: WebhookEventType[];
  payloadFormat: WebhookPayloadFormat;
  rateLimit?: number | undefined;
  owner: string;
};

/** What a registration stores besides its secret: its event types and payload format defaulted. */
export const registration = ({
  id,
  url,
  description,
  eventTypes = [...WEBHOOK_EVENT_TYPES_DEFAULT],
  payloadFormat = 'plain',
  rateLimit,
  owner,
}: NewStoredEndpoint): RegisteredFields => ({ id, url, description, eventTypes, payloadFormat, rateLimit, owner });

/** A registration's answer, as both stores give it: the endpoint enabled, stamped `createdAt`. */
export const registeredEndpoint = (
  { id, url, description, eventTypes, payloadFormat, rateLimit, owner }: RegisteredFields,
  createdAt: Date,
): CreateEndpointOutcome => ({
  outcome: 'created',
  endpoint: {
    id,
    url,
    ...(description !== undefined && { description }),
    eventTypes,
    payloadFormat,
    ...(rateLimit !== undefined && { rateLimit }),
    enabled: true,
    createdAt,
    owner,
  },
});

export const toEndpoint = (row: EndpointRow): StoredEndpoint => ({
  id: row.id,
  url: row.url,
  ...(row.description !== null && { description: row.description }),
  eventTypes: row.event_types.split(',') as WebhookEventType[],
  payloadFormat: row.payload_format as WebhookPayloadFormat,
  ...(row.rate_limit !== null && { rateLimit: Number(row.rate_limit) }),
  enabled: Number(row.enabled) === 1,
  ...(row.disabled_reason !== null && { disabledReason: row.disabled_reason }),
  createdAt: toDate(row.created_at),
  owner: row.owner,
});

export const toDelivery = (row: DeliveryRow): StoredDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  type: row.type as WebhookEventType,
  plantId: row.plant_id,
  status: row.status as DeliveryStatus,
  attempts: Number(row.attempts),
  ...(row.last_status !== null && { lastStatus: Number(row.last_status) }),
  ...(row.last_error !== null && { lastError: row.last_error }),
  ...(row.next_attempt_at !== null && { nextAttemptAt: toDate(row.next_attempt_at) }),
  ...(row.delivered_at !== null && { deliveredAt: toDate(row.delivered_at) }),
  createdAt: toDate(row.created_at),
});
