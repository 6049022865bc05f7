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
  PlantAbortError,
  PlantApiError,
  PlantClientError,
  PlantConnectionError,
  PlantTimeoutError,
  RateLimitError,
  ServiceUnavailableError,
  UnsupportedMediaTypeError,
} from './errors.ts';
export type { FetchLike } from './fetcher.ts';
export type { PlantLogger, PlantLogLevel } from './logger.ts';
export { nextPageQuery } from './next-page.ts';
export type { HeaderMap, TokenSource } from './options.ts';
export { PagePromise, type PlantPage } from './page.ts';
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
export { PlantPromise, type WithResponse } from './plant-promise.ts';
export { RETRY_COUNT_HEADER } from './request-headers.ts';
export { createPlantRestClient, type PlantRestClient, type PlantRestClientOptions } from './rest-client.ts';
