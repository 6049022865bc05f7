/**
 * The interface's version, the OpenAPI document's `info.version`: the contract package's version,
 * or the first release's (1.0.0) while the package is unreleased (scripts/interface-version.ts).
 * `pnpm --filter @org/plant-contract openapi` (which `pnpm version-packages` runs) writes it here,
 * and a test fails when it is stale.
 */
export const CONTRACT_VERSION = '1.0.0';
