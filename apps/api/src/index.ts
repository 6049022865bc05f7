/**
 * What another Express application needs to embed the Plant Store API (mounted under a prefix, as
 * app.test.ts does through this module): the app factory, a store, and who may call it. The
 * service itself (main.ts) adds configuration, listening, admission control and shutdown.
 */
export { type AppOptions, createApp } from './app.ts';
export { type Authenticator, combineAuthenticators, type Principal, staticTokens } from './auth/authenticator.ts';
export { hashToken } from './auth/token-hash.ts';
export { createMetrics, type Metrics, type MetricsOptions } from './ops/metrics.ts';
export type { CreateOutcome, PlantStore, StoredPlant } from './store/plant-store.ts';
export { StoreUnavailableError } from './store/plant-store.ts';
export { PostgresPlantStore, type PostgresStoreOptions, SchemaTooNewError } from './store/postgres/postgres-store.ts';
export { DataDirInUseError } from './store/sqlite/database-thread.ts';
export { SqlitePlantStore } from './store/sqlite/sqlite-store.ts';
