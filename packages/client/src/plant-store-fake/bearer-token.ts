import { OPERATOR_PRINCIPAL, readBearerToken, type Scope, WEBHOOKS_ADMIN_SCOPE } from '@org/plant-contract';
import { Refusal } from './answers.ts';

const REALM = 'plant-store';

/**
 * A token the fake accepts: a static one is the operator's, which may do everything and manage
 * every principal's webhook endpoints; one with scopes may do only what they grant (with
 * `webhooks:admin`, on every principal's endpoints), on behalf of `principal`: who owns the endpoints
 * it registers, as the service's `owner` names it (`jwt:<sub>`, `token:<name>`). By default such a
 * token is a principal of its own.
 */
export type FakeToken =
  | string
  | { token: string; scopes: readonly (Scope | typeof WEBHOOKS_ADMIN_SCOPE)[]; principal?: string };

/** Who a request came from, as the service resolves it: the owner of what it creates, and whether it sees every owner's. */
export type FakePrincipal = { key: string; admin: boolean };

const challenge = (error?: { code: string; description: string; scope?: string }): Record<string, string> => ({
  'www-authenticate': error
    ? `Bearer realm="${REALM}", error="${error.code}", error_description="${error.description}"${
        error.scope ? `, scope="${error.scope}"` : ''
      }`
    : `Bearer realm="${REALM}"`,
});

const invalidRequest = (description: string) =>
  new Refusal(400, description, challenge({ code: 'invalid_request', description }));

/** The token of a well-formed `Authorization: Bearer <token>`; throws the service's answer otherwise. */
const bearerToken = (headers: Headers, query: Record<string, unknown>): string => {
  if (query.access_token !== undefined) {
    throw invalidRequest('Send the token in the Authorization header, not in the query string.');
  }
  const read = readBearerToken(headers.get('authorization') ?? undefined);
  if (typeof read === 'string') return read;
  const { status, message } = read;
  throw status === 400 ? invalidRequest(message) : new Refusal(status, message, challenge());
};

const writeScopeOf = (scope: Scope): Scope | undefined =>
  scope.endsWith(':read') ? (`${scope.slice(0, -':read'.length)}:write` as Scope) : undefined;

const OPERATOR: FakePrincipal = { key: OPERATOR_PRINCIPAL, admin: true };

/**
 * Checks the request's bearer token as the service does (401/400 with RFC 6750 challenges, 403
 * `insufficient_scope` for a scoped token without the route's scope). `tokens` undefined accepts
 * any well-formed token as a static one. Answers the principal the request came from.
 */
export const authorize = (
  tokens: readonly FakeToken[] | undefined,
  headers: Headers,
  query: Record<string, unknown>,
  scope: Scope,
): FakePrincipal => {
  const token = bearerToken(headers, query);
  if (tokens === undefined) return OPERATOR;
  const known = tokens.find((candidate) => (typeof candidate === 'string' ? candidate : candidate.token) === token);
  if (known === undefined) {
    const description = 'The access token is invalid.';
    throw new Refusal(401, description, challenge({ code: 'invalid_token', description }));
  }
  if (typeof known === 'string') return OPERATOR;
  const admin = known.scopes.includes(WEBHOOKS_ADMIN_SCOPE);
  const writeScope = writeScopeOf(scope);
  if (
    known.scopes.includes(scope) ||
    (writeScope !== undefined && known.scopes.includes(writeScope)) ||
    (admin && scope.startsWith('webhooks:'))
  ) {
    return { key: known.principal ?? known.token, admin };
  }
  const description = `The access token lacks the ${scope} scope.`;
  throw new Refusal(403, description, challenge({ code: 'insufficient_scope', description, scope }));
};
