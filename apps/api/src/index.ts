export { type AppOptions, createApp } from './app.ts';
export { type ApiTokens, resolveApiTokens } from './auth/api-tokens.ts';
export { createTokenVerifier, hashToken } from './auth/token-hash.ts';
export { type Config, ConfigError, loadConfig } from './config.ts';
export {
  ADMISSION_DEFAULTS,
  type Admission,
  type AdmissionLimits,
  type AdmissionOptions,
  admitRequests,
  type ShedReason,
} from './http/admission.ts';
export { createHttpServer, type ServerConfig, shutdownGracefully } from './http/http-server.ts';
export { BODY_LIMIT_BYTES } from './http/json-body.ts';
export { createMetrics, type Metrics, type MetricsOptions } from './ops/metrics.ts';
export type { CreateOutcome, PlantStore, StoredPlant } from './store/plant-store.ts';
export { StoreUnavailableError } from './store/plant-store.ts';
export { PostgresPlantStore, type PostgresStoreOptions, SchemaTooNewError } from './store/postgres-store.ts';
export { DataDirInUseError, SqlitePlantStore } from './store/sqlite-store.ts';
