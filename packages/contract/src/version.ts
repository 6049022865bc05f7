/**
 * The version of @org/plant-contract, and so the OpenAPI document's `info.version`. package.json is
 * the source: `pnpm --filter @org/plant-contract openapi` (which `pnpm version-packages` runs) writes
 * it here, and a test fails when the two differ.
 */
export const CONTRACT_VERSION = '1.0.0';
