export type {
  ApiError,
  CreatedWebhookEndpoint,
  NewPlant,
  NewWebhookEndpoint,
  Plant,
  PlantWithId,
  WebhookDelivery,
  WebhookEndpoint,
} from '@org/plant-contract';
export {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PlantApiError,
  PlantClientError,
  PlantConnectionError,
  PlantTimeoutError,
  RateLimitError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
} from './errors.ts';
export type { FetchLike } from './fetcher.ts';
export type { PlantCallOptions } from './plant-api.ts';
export {
  createPlantClient,
  DEFAULT_MAX_RETRIES,
  DEFAULT_TIMEOUT_MS,
  type ListPlantsOptions,
  type ListWebhookDeliveriesOptions,
  type PlantClient,
  type PlantClientOptions,
  type RequestOptions,
  type RetryOptions,
} from './plant-client.ts';
export { createPlantRestClient, type PlantRestClient, type PlantRestClientOptions } from './rest-client.ts';
