import { WEBHOOKS_ADMIN_SCOPE } from '@org/plant-contract';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type ExportedJWKSCache,
  errors,
  type JWKSCacheInput,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  jwksCache,
  jwtVerify,
} from 'jose';
import { CONFIG_DEFAULTS } from '../config-defaults.ts';
import { type Authenticator, AuthUnavailableError, type Principal } from './authenticator.ts';

export type JwtOptions = {
  jwksUrl: string;
  issuer: string;
  audience: string;
  algorithms: readonly string[];
  /** How long one JWKS fetch may take before the request is answered 503. */
  jwksTimeoutMs?: number;
  /**
   * After a fetch, how long a token with an unknown key id is refused without fetching again, so
   * that tokens with made-up key ids cannot make the service hammer the identity provider.
   */
  jwksCooldownMs?: number;
  /** How far the identity provider's clock may be from ours when `exp` and `nbf` are checked. */
  clockToleranceMs?: number;
  /** How long fetched keys are used before they are fetched again (jose's `cacheMaxAge`). */
  jwksCacheMaxAgeMs?: number;
  /**
   * Once the keys are that old and cannot be fetched again, how much longer they still verify
   * tokens before the service answers 503: an identity provider's outage is not one of the service.
   */
  jwksMaxStaleMs?: number;
  /** Milliseconds since the epoch; the system's by default (tests move it to age the keys). */
  now?: () => number;
  /**
   * Where verification keys come from instead of the JWKS: for tests that need a lookup jose's
   * JWKS would never perform, such as one handing an RSA key's PEM to HMAC.
   */
  keyLookup?: JWTVerifyGetKey;
  /**
   * The claim that names the token's principal, which owns what it creates: `sub` by default, or
   * where an identity provider puts the client or the tenant (`azp`, `client_id`, …). A token
   * without it, or with it empty or not a string, is refused.
   */
  principalClaim?: string;
};

/** The token itself is bad: 401 invalid_token. Anything else means the keys cannot be had: 503. */
/** How long fetched keys are cached before they are fetched again (docs/configuration.md says 10 minutes). */
const JWKS_CACHE_MAX_AGE_MS = 600_000;

const TOKEN_ERRORS = [
  errors.JWTExpired,
  errors.JWTClaimValidationFailed,
  errors.JWTInvalid,
  errors.JWSInvalid,
  errors.JWSSignatureVerificationFailed,
  errors.JOSEAlgNotAllowed,
  errors.JOSENotSupported,
  errors.JWKSNoMatchingKey,
  errors.JWKSMultipleMatchingKeys,
];

/** OAuth 2.0 scopes: `scope` is a space-separated string (RFC 8693), `scp` an array in some issuers. */
const scopesOf = (payload: JWTPayload): Set<string> => {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  if (typeof scope === 'string') return new Set(scope.split(' ').filter(Boolean));
  if (Array.isArray(scp)) return new Set(scp.filter((item): item is string => typeof item === 'string'));
  return new Set();
};

const isTokenError = (error: unknown): boolean => TOKEN_ERRORS.some((type) => error instanceof type);

/**
 * Verifies JWTs against a remote JWKS (cached, refetched for unknown key ids) with jose. Tokens
 * must carry `exp`. When the keys are due to be fetched again and cannot be, the keys last fetched
 * keep verifying for `jwksMaxStaleMs`, without a fetch per request meanwhile (one per cooldown).
 */
export const jwtAuthenticator = ({
  jwksUrl,
  issuer,
  audience,
  algorithms,
  jwksTimeoutMs = 3000,
  jwksCooldownMs = 30_000,
  clockToleranceMs = CONFIG_DEFAULTS.jwt.clockToleranceMs,
  jwksCacheMaxAgeMs = JWKS_CACHE_MAX_AGE_MS,
  jwksMaxStaleMs = CONFIG_DEFAULTS.jwt.jwksMaxStaleMs,
  now = Date.now,
  keyLookup,
  principalClaim = CONFIG_DEFAULTS.jwt.principalClaim,
}: JwtOptions): Authenticator => {
  // jose records here the keys it last fetched, and when.
  const fetched: JWKSCacheInput = {};
  const keys =
    keyLookup ??
    createRemoteJWKSet(new URL(jwksUrl), {
      timeoutDuration: jwksTimeoutMs,
      cooldownDuration: jwksCooldownMs,
      cacheMaxAge: jwksCacheMaxAgeMs,
      [jwksCache]: fetched,
    });
  const options: JWTVerifyOptions = {
    issuer,
    audience,
    algorithms: [...algorithms],
    requiredClaims: ['exp'],
    clockTolerance: clockToleranceMs / 1000,
  };
  let failedAt = Number.NEGATIVE_INFINITY;
  let stale: { uat: number; keys: ReturnType<typeof createLocalJWKSet> } | undefined;
  /** The keys last fetched, while they may still be used although they could not be fetched again. */
  const staleKeys = () => {
    const { jwks, uat } = fetched as Partial<ExportedJWKSCache>;
    if (jwks === undefined || uat === undefined || now() - uat > jwksCacheMaxAgeMs + jwksMaxStaleMs) return undefined;
    if (stale?.uat !== uat) stale = { uat, keys: createLocalJWKSet(jwks) };
    return stale.keys;
  };
  const identify = (payload: JWTPayload): Principal | undefined => {
    const name = payload[principalClaim];
    // Without a name, every such token would be a principal of its own, or all one: neither is a team.
    if (typeof name !== 'string' || name === '') return undefined;
    const scopes = scopesOf(payload);
    return { key: `jwt:${name}`, scopes, admin: scopes.has(WEBHOOKS_ADMIN_SCOPE) };
  };
  const verifyStale = async (token: string, stale: ReturnType<typeof createLocalJWKSet>) => {
    try {
      return identify((await jwtVerify(token, stale, options)).payload);
    } catch (error) {
      if (isTokenError(error)) return undefined;
      throw error;
    }
  };
  return async (token) => {
    // A fetch failed a moment ago: the stale keys answer without waiting on another one.
    const recent = now() - failedAt < jwksCooldownMs ? staleKeys() : undefined;
    if (recent) return verifyStale(token, recent);
    try {
      return identify((await jwtVerify(token, keys, options)).payload);
    } catch (error) {
      if (isTokenError(error)) return undefined;
      failedAt = now();
      const fallback = staleKeys();
      if (fallback) return verifyStale(token, fallback);
      throw new AuthUnavailableError('The keys that verify access tokens cannot be fetched.', { cause: error });
    }
  };
};
