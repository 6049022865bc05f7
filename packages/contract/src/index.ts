export type { BearerRefusal } from './bearer-token.ts';
export { readBearerToken } from './bearer-token.ts';
export type { PlantContract, RouteMetadata, Scope } from './contract.ts';
export { contract, SCOPES } from './contract.ts';
export {
  exactJsonReplacer,
  exactNumber,
  hasOnlyExactNumbers,
  parseExactJson,
  restoreExactIntegers,
  stringifyExactJson,
} from './exact-json.ts';
export {
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENCY_KEY_TTL_MS,
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyHeaders,
} from './idempotency.ts';
export { INT64_MAX, INT64_MIN, Int64, isInt64 } from './int64.ts';
export { jsonContentTypeProblem, jsonShapeProblem, MAX_JSON_DEPTH } from './json-shape.ts';
export {
  type EventDataJson,
  PAYLOAD_FORMAT_JSON,
  parsePlantJson,
  WEBHOOK_EVENT_DATA_JSON,
  webhookEventJson,
} from './json-text.ts';
export type { JsonSchema, JsonSchemaOptions } from './openapi/json-schema.ts';
export { toJsonSchema } from './openapi/json-schema.ts';
export type {
  OpenApiDocument,
  OpenApiDocumentOptions,
  OpenApiOperation,
  OpenApiResponse,
  OpenApiServer,
} from './openapi/openapi-document.ts';
export { createOpenApiDocument, stringifyOpenApiDocument } from './openapi/openapi-document.ts';
export {
  Int64Text,
  LIST_LIMIT_DEFAULT,
  LIST_LIMIT_MAX,
  LIST_PAGE_MAX_BYTES,
  ListPlantsQuery,
  PlantIdParams,
} from './parameters.ts';
export { ApiError, NAME_MAX_LENGTH, NewPlant, Plant, PlantWithId, TAG_MAX_LENGTH } from './schemas.ts';
export {
  PLANT_JSON_MAX_BYTES,
  plantJson,
  type StoredPlant,
  samePlant,
  toStoredPlant,
  withoutId,
} from './stored-plant.ts';
export { validationMessage } from './validation-message.ts';
export {
  type EventPlant,
  unknownEventType,
  WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES_DEFAULT,
  WEBHOOK_EVENTS,
  webhookEventBody,
} from './webhook-events.ts';
export {
  WEBHOOK_TEST_ID_PREFIX,
  WEBHOOK_TEST_PLANT,
  WEBHOOK_TESTS_PER_MINUTE,
  type WebhookTestAnswer,
  WebhookTestRequest,
  WebhookTestResult,
  webhookTestBody,
  webhookTestJson,
  webhookTestOutcome,
  webhookTestsLimited,
} from './webhook-test.ts';
export { normalizeWebhookUrl, webhookUrlSchemeProblem } from './webhook-url.ts';
// Every export of webhooks.ts is public: the webhook schemas, their limits and headers.
export * from './webhooks.ts';
