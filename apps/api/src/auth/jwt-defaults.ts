// Apart from jwt-authenticator.ts, so that config.ts does not load jose when JWTs are not configured.

/**
 * JWT verification defaults: the clock tolerance for `exp` and `nbf` (PLANT_API_JWT_CLOCK_TOLERANCE_MS),
 * how long fetched keys are cached, and how long they still verify past that when the JWKS cannot
 * be fetched (PLANT_API_JWKS_MAX_STALE_MS).
 */
export const JWT_DEFAULTS = {
  clockToleranceMs: 30_000,
  jwksCacheMaxAgeMs: 600_000,
  jwksMaxStaleMs: 3_600_000,
} as const;
