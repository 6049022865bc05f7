import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';
import { type Authenticator, AuthUnavailableError } from './authenticator.ts';
import { hashToken } from './token-hash.ts';

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
};

/** The token itself is bad: 401 invalid_token. Anything else means the keys cannot be had: 503. */
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

/** Verifies JWTs against a remote JWKS (cached, refetched for unknown key ids) with jose. */
export const jwtAuthenticator = ({
  jwksUrl,
  issuer,
  audience,
  algorithms,
  jwksTimeoutMs = 3000,
  jwksCooldownMs = 30_000,
}: JwtOptions): Authenticator => {
  const keys = createRemoteJWKSet(new URL(jwksUrl), {
    timeoutDuration: jwksTimeoutMs,
    cooldownDuration: jwksCooldownMs,
  });
  return async (token) => {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer, audience, algorithms: [...algorithms] });
      const subject = payload.sub ?? hashToken(token).toString('hex').slice(0, 16);
      return { key: `jwt:${subject}`, scopes: scopesOf(payload) };
    } catch (error) {
      if (TOKEN_ERRORS.some((type) => error instanceof type)) return undefined;
      throw new AuthUnavailableError('The keys that verify access tokens cannot be fetched.', { cause: error });
    }
  };
};
