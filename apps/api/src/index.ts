export { type AppOptions, createApp } from './app.ts';
export { type ApiTokens, resolveApiTokens } from './auth/api-tokens.ts';
export { createTokenVerifier, hashToken } from './auth/token-hash.ts';
export { type Config, ConfigError, loadConfig } from './config.ts';
export { BODY_LIMIT_BYTES } from './http/json-body.ts';
export type { CreateOutcome, PlantStore, StoredPlant } from './store/plant-store.ts';
export { StoreUnavailableError } from './store/plant-store.ts';
export { DataDirInUseError, SqlitePlantStore } from './store/sqlite-store.ts';
