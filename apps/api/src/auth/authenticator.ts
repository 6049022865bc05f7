import { createTokenMatcher } from './token-hash.ts';

/** Who a valid token belongs to. */
export type Principal = {
  /** Stable and free of secrets: rate limits are kept per key. */
  key: string;
  /** Scopes granted, or undefined for a static token, which may do everything. */
  scopes?: ReadonlySet<string>;
};

/** Resolves the principal of a valid token, undefined for an invalid one; throws AuthUnavailableError. */
export type Authenticator = (token: string) => Promise<Principal | undefined>;

/** Tokens cannot be checked now (the JWKS cannot be fetched): the caller should retry later. */
export class AuthUnavailableError extends Error {
  override readonly name = 'AuthUnavailableError';
}

/** Static bearer tokens, known by their SHA-256. */
export const staticTokens = (hashes: readonly Buffer[]): Authenticator => {
  const match = createTokenMatcher(hashes);
  return async (token) => {
    const digest = match(token);
    return digest === undefined ? undefined : { key: `token:${digest.slice(0, 16)}` };
  };
};

const JWT_SHAPE = /^eyJ[\w-]*\.[\w-]*\.[\w-]*$/;

/**
 * Tokens shaped like a JWT go to `jwt` when configured; every other token to `tokens`.
 * Either may be absent.
 */
export const combineAuthenticators =
  ({ tokens, jwt }: { tokens?: Authenticator; jwt?: Authenticator }): Authenticator =>
  async (token) => {
    if (jwt && JWT_SHAPE.test(token)) return jwt(token);
    return tokens ? tokens(token) : undefined;
  };
