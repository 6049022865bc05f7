import { OPERATOR_PRINCIPAL, WEBHOOKS_ADMIN_SCOPE } from '@org/plant-contract';
import { createTokenMatcher } from './token-hash.ts';

/** Who a valid token belongs to. */
export type Principal = {
  /**
   * The principal's name, stable across its credentials and free of secrets: `operator`,
   * `token:<name>` or `jwt:<claim>`. It owns what it creates; rate limits and shares count per key.
   */
  key: string;
  /** Scopes granted, or undefined for the operator, which may do everything. */
  scopes?: ReadonlySet<string>;
  /** Whether scopes bind it even where JWTs' need not (PLANT_API_JWT_REQUIRE_SCOPES=false): a named token's. */
  scopesAlwaysApply?: boolean;
  /** Sees and manages every principal's webhook endpoints: the operator, or the webhooks:admin scope. */
  admin: boolean;
};

/** Resolves the principal of a valid token, undefined for an invalid one; throws AuthUnavailableError. */
export type Authenticator = (token: string) => Promise<Principal | undefined>;

/** Tokens cannot be checked now (the JWKS cannot be fetched): the caller should retry later. */
export class AuthUnavailableError extends Error {
  override readonly name = 'AuthUnavailableError';
}

/** A static token as configured: its SHA-256, and for a team's token the principal's name and scopes. */
export type StaticToken = { hash: Buffer; principal?: { name: string; scopes: readonly string[] } };

/** The operator: the unnamed static tokens, which may do everything and see every endpoint. */
const OPERATOR: Principal = { key: OPERATOR_PRINCIPAL, admin: true };

/**
 * Static bearer tokens, known by their SHA-256: an unnamed one is the operator's, a named one its
 * principal's (several tokens may share a name, which a rotation needs).
 */
export const staticTokens = (tokens: readonly StaticToken[]): Authenticator => {
  const match = createTokenMatcher(tokens.map(({ hash }) => hash));
  const principals = tokens.map(
    ({ principal }): Principal =>
      principal
        ? {
            key: `token:${principal.name}`,
            scopes: new Set(principal.scopes),
            scopesAlwaysApply: true,
            admin: principal.scopes.includes(WEBHOOKS_ADMIN_SCOPE),
          }
        : OPERATOR,
  );
  return async (token) => principals[match(token)];
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
