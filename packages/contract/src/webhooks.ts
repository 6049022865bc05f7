import { z } from 'zod';
import { maxCharacters } from './characters.ts';
import { atLeastOneProperty, refineDocumented, uniqueItems } from './documented-refinement.ts';
import { Int64 } from './int64.ts';
import {
  PlantDeleted,
  type WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES_DEFAULT,
  WebhookEventType,
  WebhookPayloadFormat,
} from './webhook-events.ts';

// Re-exported: the webhook schemas are components of the OpenAPI document (openapi/components.ts).
export { PlantDeleted, WebhookEventType, WebhookPayloadFormat };

import { webhookUrlSchemeProblem } from './webhook-url.ts';

/** Longest accepted webhook URL and description, in characters (Unicode code points). */
export const WEBHOOK_URL_MAX_LENGTH = 2000;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
/**
 * Most endpoints one principal (a team's credential) registers at once: each is a row written with
 * every plant created. The service caps all principals' endpoints together too (its configuration).
 */
export const WEBHOOK_ENDPOINTS_MAX = 100;

/** The largest per-endpoint rate limit, in deliveries per second. */
export const WEBHOOK_RATE_LIMIT_MAX = 1000;

/** Page size of GET /webhooks/{id}/deliveries when `limit` is not given, and the largest accepted. */
export const DELIVERIES_LIMIT_DEFAULT = 50;
export const DELIVERIES_LIMIT_MAX = 1000;

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const NO_CONTROL_CHARACTERS_OR_WHITESPACE = /^[^\u0000-\u0020\u007f\s]*$/u;

/** How long a rotated-out secret still signs deliveries, by default: PLANT_WEBHOOK_ROTATION_GRACE_MS. */
export const WEBHOOK_ROTATION_GRACE_DEFAULT_MS = 24 * 3_600_000;
/**
 * Most rotated-out secrets that still sign deliveries during their grace: a rotation beyond them
 * ends the grace of the oldest at once.
 */
export const WEBHOOK_PREVIOUS_SECRETS_MAX = 4;
/** Most failed deliveries one POST /webhooks/{id}/recover makes pending again. */
export const WEBHOOK_RECOVER_MAX = 10_000;

const rfc3339 = (description: string) =>
  z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time' }).describe(description);

const objectMessages = { invalid_type_error: 'must be a JSON object', required_error: 'is required' };

/**
 * What the document says of webhookUrlSchemeProblem's rules: an http or https URL (https alone
 * unless the service allows private targets, which the description says) with no user name or password.
 */
const WEBHOOK_URL_SCHEME_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://[^/?#@\\\\]*(?:[/?#\\\\]|$)';

const endpointShape = {
  url: refineDocumented(
    maxCharacters(
      z.string({ required_error: 'is required', invalid_type_error: 'must be a string' }),
      WEBHOOK_URL_MAX_LENGTH,
    )
      // URL parsing would drop them silently; a URL that carries any is refused instead.
      .regex(NO_CONTROL_CHARACTERS_OR_WHITESPACE, 'must not contain whitespace or control characters')
      .url('must be an absolute URL'),
    (text) =>
      URL.canParse(text) ? webhookUrlSchemeProblem(new URL(text), true)?.replace(/^url (.*)\.$/, '$1') : undefined,
    { pattern: WEBHOOK_URL_SCHEME_PATTERN },
  ).describe(
    'Where each new plant is POSTed: an https URL of a host with a public address. Stored and answered in its WHATWG serialization without fragment (`HTTPS://Example.COM/a/../b#x` becomes `https://example.com/b`); one endpoint per URL for each principal',
  ),
  description: maxCharacters(z.string({ invalid_type_error: 'must be a string' }), WEBHOOK_DESCRIPTION_MAX_LENGTH)
    .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
    .optional()
    .describe('A note for people: what receives these plants'),
};

const eventTypes = uniqueItems(
  z
    .array(WebhookEventType, { invalid_type_error: 'must be an array of event types' })
    .min(1, 'must list at least one event type')
    .max(WEBHOOK_EVENT_TYPES.length, `must list at most ${WEBHOOK_EVENT_TYPES.length} event types`),
  'must not list an event type twice',
).describe(
  `The event types delivered to the endpoint, one or more of ${WEBHOOK_EVENT_TYPES.join(', ')}. A change applies to the events announced after it`,
);

const rateLimitMessage = `must be a whole number from 1 to ${WEBHOOK_RATE_LIMIT_MAX}`;

/** Deliveries per second at most to an endpoint. */
const rateLimit = z
  .number({ invalid_type_error: rateLimitMessage })
  .int(rateLimitMessage)
  .min(1, rateLimitMessage)
  .max(WEBHOOK_RATE_LIMIT_MAX, rateLimitMessage)
  .describe(
    `The most deliveries per second this endpoint receives, 1 to ${WEBHOOK_RATE_LIMIT_MAX}, whichever replica or delivery process sends them: over any span of t seconds at most rateLimit × (t + 1) (a burst of one second's worth, then the rate). Retries count. Deliveries beyond it wait, in order, and none is dropped. No limit when absent: deliveries go as fast as the receiver answers`,
  );

/** The request body of POST /webhooks. */
export const NewWebhookEndpoint = z.object(
  {
    ...endpointShape,
    eventTypes: eventTypes
      .optional()
      .describe(`${eventTypes.description}; ${WEBHOOK_EVENT_TYPES_DEFAULT.join(' and ')} when left out`),
    payloadFormat: WebhookPayloadFormat.optional().describe(`${WebhookPayloadFormat.description}; plain when left out`),
    rateLimit: rateLimit.optional(),
  },
  objectMessages,
);
export type NewWebhookEndpoint = z.infer<typeof NewWebhookEndpoint>;

/** A subscribed receiver as the service answers it; the secret is never part of it. */
export const WebhookEndpoint = z.object({
  id: z.string().describe('Identifier of the endpoint'),
  ...endpointShape,
  // Optional, so that a client that validates answers still reads an older service, which answered
  // neither (meaning newPlant, plain); this service always answers both.
  eventTypes: eventTypes.optional(),
  payloadFormat: WebhookPayloadFormat.optional(),
  rateLimit: rateLimit.optional(),
  enabled: z
    .boolean()
    .describe(
      'False once disabled: the receiver answered 410 Gone, every delivery to it failed for PLANT_WEBHOOK_DISABLE_AFTER_MS (5 days by default), or a PATCH disabled it. Nothing is sent to a disabled endpoint; its pending deliveries wait, and PATCH `enabled: true` resumes them',
    ),
  disabledReason: z
    .string()
    .optional()
    .describe('Why the endpoint is disabled, as a sentence; present only while it is disabled'),
  createdAt: rfc3339('When the endpoint was registered'),
  owner: z
    .string()
    .optional()
    .describe(
      "The principal that registered the endpoint and owns it: `jwt:<claim>` for a JWT, `token:<name>` for a named API token, `operator` for the service's unnamed API tokens. Answered only to callers with the webhooks:admin scope (or the operator); everyone else sees only their own endpoints",
    ),
});
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

/** A webhook endpoint as the service, or a fake of it, keeps one: what toWebhookEndpoint answers. */
export type StoredWebhookEndpoint = {
  id: string;
  url: string;
  description?: string;
  /** The event types it receives. */
  eventTypes: WebhookEventType[];
  payloadFormat: WebhookPayloadFormat;
  /** Deliveries per second at most; no limit when absent. */
  rateLimit?: number;
  enabled: boolean;
  /** Why it is disabled; only while it is. */
  disabledReason?: string;
  createdAt: Date;
  /** The principal that registered it (see WebhookEndpoint's owner). */
  owner: string;
};

/** The role that sees and manages every principal's webhook endpoints, and each one's owner. */
export const WEBHOOKS_ADMIN_SCOPE = 'webhooks:admin';

/** The principal of the service's unnamed API tokens: an administrator, and the owner of endpoints older than ownership. */
export const OPERATOR_PRINCIPAL = 'operator';

/** The WebhookEndpoint answered for a stored one: never its secret, and its owner only to an administrator. */
export const toWebhookEndpoint = (
  {
    id,
    url,
    description,
    eventTypes,
    payloadFormat,
    rateLimit,
    enabled,
    disabledReason,
    createdAt,
    owner,
  }: StoredWebhookEndpoint,
  { showOwner = false }: { showOwner?: boolean } = {},
): WebhookEndpoint => ({
  id,
  url,
  ...(description !== undefined && { description }),
  eventTypes: [...eventTypes],
  payloadFormat,
  ...(rateLimit !== undefined && { rateLimit }),
  enabled,
  ...(disabledReason !== undefined && { disabledReason }),
  createdAt: createdAt.toISOString(),
  ...(showOwner && { owner }),
});

const secret = z
  .string()
  .regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, 'must be whsec_ followed by base64')
  .describe(
    'The signing secret, `whsec_` and the base64 of 24 to 64 random bytes. Shown only in this answer: keep it to verify the webhook-signature of each delivery',
  );

/** The answer to POST /webhooks: the endpoint and, this once, its signing secret. */
export const CreatedWebhookEndpoint = WebhookEndpoint.extend({ secret });

/** The request body of PATCH /webhooks/{id}: what changes, at least one of its fields. */
export const WebhookEndpointChanges = atLeastOneProperty(
  z.object(
    {
      url: endpointShape.url.optional(),
      description: endpointShape.description.unwrap().nullable().optional().describe('A new note; null removes it'),
      enabled: z
        .boolean({ invalid_type_error: 'must be true or false' })
        .optional()
        .describe(
          'false stops deliveries to the endpoint (pending ones wait); true resumes the deliveries that disabling (or a 410 Gone answer) stopped',
        ),
      eventTypes: eventTypes.optional(),
      payloadFormat: WebhookPayloadFormat.optional(),
      rateLimit: rateLimit
        .nullable()
        .optional()
        .describe(
          `${rateLimit.description}. A change applies from the next deliveries claimed; null removes the limit`,
        ),
    },
    objectMessages,
  ),
);
export type WebhookEndpointChanges = z.infer<typeof WebhookEndpointChanges>;
/** The fields a PATCH /webhooks/{id} may change. */
export const WEBHOOK_ENDPOINT_CHANGE_FIELDS = Object.keys(WebhookEndpointChanges.innerType().shape) as ReadonlyArray<
  keyof WebhookEndpointChanges
>;

/** The answer to POST /webhooks/{id}/rotate-secret. */
export const RotatedWebhookSecret = z.object({
  secret: secret.describe(
    `The new signing secret, shown only in this answer. For the rotation grace (24 hours by default) each delivery carries a signature with this secret and one with each secret rotated out within the grace, up to ${WEBHOOK_PREVIOUS_SECRETS_MAX} of them`,
  ),
});
export type RotatedWebhookSecret = z.infer<typeof RotatedWebhookSecret>;

/** The request body of POST /webhooks/{id}/recover. */
export const RecoverWebhookDeliveries = z.object(
  {
    since: z
      .string({ required_error: 'is required', invalid_type_error: 'must be a string' })
      // RFC 3339 allows a lower-case `t` and `z`, which zod's check does not.
      .toUpperCase()
      .datetime({ offset: true, message: 'must be an RFC 3339 date-time' })
      // Nor can a Date hold its leap second: the document says so as a pattern.
      .regex(/^(?!.*:60)/, 'must not be a leap second (:60)')
      .describe('Failed deliveries announced at or after this time are attempted again'),
  },
  objectMessages,
);
export type RecoverWebhookDeliveries = z.infer<typeof RecoverWebhookDeliveries>;

/** The answer to POST /webhooks/{id}/recover. */
export const RequeuedWebhookDeliveries = z.object({
  requeued: z
    .number()
    .int()
    .min(0)
    .max(WEBHOOK_RECOVER_MAX)
    .describe(
      `How many failed deliveries are pending again, at most ${WEBHOOK_RECOVER_MAX}; when it is ${WEBHOOK_RECOVER_MAX}, more may remain: recover again`,
    ),
});
export type RequeuedWebhookDeliveries = z.infer<typeof RequeuedWebhookDeliveries>;
export type CreatedWebhookEndpoint = z.infer<typeof CreatedWebhookEndpoint>;

/** One announcement of one plant to one endpoint, with where its delivery stands. */
export const WebhookDelivery = z.object({
  id: z.string().describe('The webhook-id header of every attempt: receivers deduplicate on it'),
  plantId: Int64.describe('Identification number of the announced plant'),
  // Optional, so that a client that validates answers still reads an older service, which did not
  // answer it; this service always does.
  type: WebhookEventType.optional().describe('The event announced: the webhook-event-type of every attempt'),
  status: z
    .enum(['pending', 'delivered', 'failed'])
    .describe(
      'pending: being tried or waiting for a retry; delivered: a 2xx answer came; failed: every retry is spent',
    ),
  attempts: z.number().int().min(0).describe('Attempts made so far'),
  lastStatus: z.number().int().optional().describe('HTTP status of the last attempt, when the receiver answered'),
  lastError: z.string().optional().describe('Why the last attempt failed'),
  nextAttemptAt: rfc3339('When the next attempt is due (pending deliveries)').optional(),
  deliveredAt: rfc3339('When the receiver acknowledged the plant').optional(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

const once = { invalid_type_error: 'must be given once' };

const IDENTIFIER_MAX_LENGTH = 100;

export const WebhookIdParams = z.object({
  id: maxCharacters(z.string(once).min(1, 'must not be empty'), IDENTIFIER_MAX_LENGTH).describe(
    'Identifier of the endpoint',
  ),
});

export const WebhookDeliveryParams = WebhookIdParams.extend({
  deliveryId: maxCharacters(z.string(once).min(1, 'must not be empty'), IDENTIFIER_MAX_LENGTH).describe(
    'Identifier of the delivery: its webhook-id',
  ),
});

const DeliveriesLimit = z
  .string(once)
  .regex(/^\d{1,10}$/, `must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}`)
  .transform(Number)
  .refine(
    (limit) => limit >= 1 && limit <= DELIVERIES_LIMIT_MAX,
    `must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}`,
  );

/** A delivery's webhook-id, `msg_<16 hex digits>_<digits>`: where a page of deliveries continues. */
const DeliveryCursor = z
  .string(once)
  .regex(/^msg_[0-9a-f]{16}_\d{1,19}$/, 'must be the id of a delivery (msg_<16 hex digits>_<digits>)');

export const ListWebhookDeliveriesQuery = z.object({
  limit: DeliveriesLimit.optional().describe(
    `Maximum number of deliveries to return, newest first (int32, 1 to ${DELIVERIES_LIMIT_MAX}; default ${DELIVERIES_LIMIT_DEFAULT})`,
  ),
  before: DeliveryCursor.optional().describe(
    'Continue after this delivery: only deliveries announced before it, newest first. The `Link` header of a page gives it; send it as it comes.',
  ),
});

/** The headers of every delivery: Standard Webhooks' three, and the event type. */
export const WEBHOOK_HEADERS = {
  'webhook-id': 'The delivery id: the same on every retry of one announcement, so receivers deduplicate on it',
  'webhook-timestamp': 'Unix time in seconds of this attempt; refuse deliveries more than 5 minutes off',
  'webhook-signature':
    '`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed by the base64-decoded bytes of the secret after `whsec_`. After a secret rotation, for the grace period, two such signatures separated by a space: with the new secret, then the previous one; a receiver accepts the delivery if any matches',
  // Written out rather than computed, which would keep this table in the client's browser bundle.
  'webhook-event-type':
    "The event type, as in the webhook's name: in every payload format, so that a plain body, which does not carry it, is read by its type. Not signed: check the body against the type's schema",
} as const satisfies Record<string, string> & Record<typeof WEBHOOK_EVENT_TYPE_HEADER, string>;
