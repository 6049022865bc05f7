import { isZodType } from '@ts-rest/core';
import type { ZodTypeAny } from 'zod';
import { INT64_MAX, INT64_MIN, Int64 } from '../int64.ts';
import { Int64Text, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, ListPlantsQuery } from '../parameters.ts';
import { andList } from '../prose.ts';
import * as schemas from '../schemas.ts';
import * as webhookTest from '../webhook-test.ts';
import * as webhooks from '../webhooks.ts';
import {
  DELIVERIES_LIMIT_DEFAULT,
  DELIVERIES_LIMIT_MAX,
  ListWebhookDeliveriesQuery,
  WebhookDeliveryParams,
  WebhookIdParams,
} from '../webhooks.ts';
import type { JsonSchema } from './json-schema.ts';

/** Export names that differ from the interface's component names. */
const COMPONENT_NAMES: Readonly<Record<string, string>> = { ApiError: 'Error' };

/** The webhook schemas of path and query parameters: parameters are not components. */
const WEBHOOK_PARAMETERS: ReadonlySet<unknown> = new Set([
  WebhookIdParams,
  WebhookDeliveryParams,
  ListWebhookDeliveriesQuery,
]);

/** Every zod schema that `schemas.ts`, `webhooks.ts` and `webhook-test.ts` export, parameters aside, under their OpenAPI component names, sorted by name. */
export const componentSchemas = (): Array<readonly [name: string, schema: ZodTypeAny]> =>
  Object.entries({ ...schemas, ...webhooks, ...webhookTest } as Record<string, unknown>)
    .filter((entry): entry is [string, ZodTypeAny] => isZodType(entry[1]) && !WEBHOOK_PARAMETERS.has(entry[1]))
    .map(([exported, schema]) => [COMPONENT_NAMES[exported] ?? exported, schema] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

type ComponentDocs = {
  description: string;
  /** What a success response carrying this component is called ("plant response"). */
  label?: string;
  examples: unknown[];
};

/** What zod cannot carry: descriptions and examples of the components. */
/** One endpoint, shown as registered and (with its secret) as created. */
const ENDPOINT_EXAMPLE = {
  id: 'ep_5f0c6a0e9b8d4c2f8a1e3b7d9c0f1a2b',
  url: 'https://plants.example.com/hooks/new-plant',
  description: 'Inventory sync',
  eventTypes: ['newPlant'],
  payloadFormat: 'plain',
  enabled: true,
  createdAt: '2026-01-01T12:00:00.000Z',
};

export const COMPONENT_DOCS: Readonly<Record<string, ComponentDocs>> = {
  Plant: {
    description: 'A plant as the service answers it. The id is not part of it.',
    label: 'plant',
    examples: [{ name: 'Monstera', tag: 'indoor' }],
  },
  NewPlant: {
    description:
      'The request body of creation: every field of Plant plus the client-chosen int64 `id`. ' +
      'Unknown fields are ignored and never stored; `tag` is left out when there is none (`null` is refused).',
    examples: [
      { id: 1, name: 'Monstera', tag: 'indoor' },
      { id: 9007199254740993n, name: 'Fern' },
    ],
  },
  PlantWithId: {
    description: 'A stored plant as reading answers it: its id, name and tag.',
    label: 'plant',
    examples: [{ id: 1, name: 'Monstera', tag: 'indoor' }],
  },
  NewWebhookEndpoint: {
    description:
      'The request body of POST /webhooks: the receiver URL, an optional description and the event types it receives (newPlant when left out).',
    examples: [
      { url: 'https://plants.example.com/hooks/new-plant', description: 'Inventory sync' },
      {
        url: 'https://plants.example.com/hooks/index',
        eventTypes: ['newPlant', 'plantDeleted'],
        payloadFormat: 'standard',
      },
    ],
  },
  WebhookEventType: {
    description:
      'An event type the service announces: newPlant (a plant was created) or plantDeleted (a plant was deleted).',
    examples: ['plantDeleted'],
  },
  WebhookPayloadFormat: {
    description:
      'How deliveries are shaped: plain (the event data alone, the default) or standard ({ "type", "timestamp", "data" }, as Standard Webhooks structures a payload).',
    examples: ['standard'],
  },
  PlantDeleted: {
    description: 'The body of the plantDeleted webhook: the id of the deleted plant and the plant as it was.',
    examples: [{ id: 1, plant: { id: 1, name: 'Monstera', tag: 'indoor' } }],
  },
  WebhookEndpoint: {
    description: 'A subscribed receiver of the newPlant and plantDeleted webhooks, without its secret.',
    label: 'webhook endpoint',
    examples: [ENDPOINT_EXAMPLE],
  },
  CreatedWebhookEndpoint: {
    description: 'A newly registered receiver with its signing secret, which is shown only in this answer.',
    label: 'created webhook endpoint',
    examples: [{ ...ENDPOINT_EXAMPLE, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
  },
  WebhookEndpointChanges: {
    description: `The request body of PATCH /webhooks/{id}: at least one of ${andList(webhooks.WEBHOOK_ENDPOINT_CHANGE_FIELDS)}.`,
    examples: [
      { enabled: true },
      { url: 'https://plants.example.com/hooks/v2', description: null },
      { eventTypes: ['newPlant', 'plantDeleted'] },
    ],
  },
  RotatedWebhookSecret: {
    description: "An endpoint's new signing secret, shown only in this answer.",
    label: 'new signing secret',
    examples: [{ secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD' }],
  },
  RecoverWebhookDeliveries: {
    description: 'The request body of POST /webhooks/{id}/recover: since when failed deliveries are attempted again.',
    examples: [{ since: '2026-01-01T00:00:00Z' }],
  },
  RequeuedWebhookDeliveries: {
    description: 'How many failed deliveries are pending again.',
    label: 'recovery',
    examples: [{ requeued: 42 }],
  },
  WebhookDelivery: {
    description:
      'One announcement of one plant to one endpoint. Its id is the webhook-id of every attempt, so receivers deduplicate on it.',
    label: 'webhook delivery',
    examples: [
      {
        id: 'msg_2b7e1516a8f04cc7_1042',
        plantId: 9007199254740993n,
        status: 'pending',
        attempts: 1,
        lastStatus: 503,
        lastError: 'The receiver answered 503.',
        nextAttemptAt: '2026-01-01T12:05:00.000Z',
      },
    ],
  },
  WebhookTestRequest: {
    description:
      "The request body of POST /webhooks/{id}/test, which may be left out: the event type to send (the endpoint's first subscribed type by default).",
    examples: [{ eventType: 'plantDeleted' }],
  },
  WebhookTestResult: {
    description:
      "What one test delivery came to: the receiver's status and the time taken, or why it failed. `delivered` is true for a 2xx answer.",
    label: 'webhook test result',
    examples: [
      {
        webhookId: 'msg_test_3f2a9c0d4b1e8f7a6c5d4e3f2a1b0c9d',
        eventType: 'newPlant',
        delivered: true,
        status: 204,
        durationMs: 87,
      },
      {
        webhookId: 'msg_test_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d',
        eventType: 'newPlant',
        delivered: false,
        durationMs: 10000,
        error: 'No 2xx answer within 10000 ms.',
      },
    ],
  },
  Error: {
    description:
      'The body of every failure: `error` is the HTTP status of the response, `message` a sentence naming ' +
      'the field or cause.',
    examples: [{ error: 400, message: 'Invalid request body: name is required.' }],
  },
};

const int64: JsonSchema = { type: 'integer', format: 'int64', minimum: INT64_MIN, maximum: INT64_MAX };

/**
 * Wire formats zod cannot say. Int64 is a `number | bigint` union in TypeScript and an integer
 * from −2^63 to 2^63 − 1 on the wire (path and query ids too); the error code is an int32; the
 * page size is digits that a refinement bounds.
 */
export const WIRE_FORMATS: ReadonlyArray<readonly [ZodTypeAny, JsonSchema]> = [
  [Int64, int64],
  [Int64Text, int64],
  [schemas.ApiError.shape.error, { type: 'integer', format: 'int32' }],
  [
    ListPlantsQuery.shape.limit,
    { type: 'integer', format: 'int32', minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT },
  ],
  [
    ListWebhookDeliveriesQuery.shape.limit,
    { type: 'integer', format: 'int32', minimum: 1, maximum: DELIVERIES_LIMIT_MAX, default: DELIVERIES_LIMIT_DEFAULT },
  ],
];
