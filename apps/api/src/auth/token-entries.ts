import { SCOPES, WEBHOOKS_ADMIN_SCOPE } from '@org/plant-contract';

/** A PLANT_API_TOKENS entry: a token (plain or `sha256:<hex>`), and the principal of a team's token. */
export type ApiTokenEntry = { token: string; principal?: { name: string; scopes: string[] } };

const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const MIN_TOKEN_LENGTH = 16;
/** A token given by its SHA-256, so that no plaintext token sits in the configuration. */
const SHA256_ENTRY = /^sha256:[0-9a-f]{64}$/i;
const PRINCIPAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Every scope a named token may be given: the routes' and the administrator's. */
export const TOKEN_SCOPES: readonly string[] = [...SCOPES, WEBHOOKS_ADMIN_SCOPE];
/** A named token's scopes when its entry lists none: everything on its own resources. */
export const TEAM_SCOPES: readonly string[] = SCOPES;

export const TOKEN_ENTRIES_SYNTAX = `must be a comma-separated list of entries [name[=scope+scope…]@]token, where token is at least ${MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (then = padding) or sha256:<64 hex digits> of one, name is 1 to 64 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit), and each scope one of ${TOKEN_SCOPES.join(', ')}`;

/**
 * One entry of PLANT_API_TOKENS: `token` (the operator's), `name@token` (the principal `name`, with
 * every route's scope on its own resources) or `name=scope+scope@token`; undefined when malformed.
 * Tokens never hold `@`, so the last one separates the token.
 */
export const parseTokenEntry = (entry: string): ApiTokenEntry | undefined => {
  const at = entry.lastIndexOf('@');
  const token = entry.slice(at + 1);
  if (!(SHA256_ENTRY.test(token) || (B64_TOKEN.test(token) && token.length >= MIN_TOKEN_LENGTH))) return undefined;
  if (at === -1) return { token };
  const [name = '', scopeList, ...rest] = entry.slice(0, at).split('=');
  if (!PRINCIPAL_NAME.test(name) || rest.length > 0) return undefined;
  const scopes = scopeList === undefined ? [...TEAM_SCOPES] : scopeList.split('+');
  if (scopes.length === 0 || !scopes.every((scope) => TOKEN_SCOPES.includes(scope))) return undefined;
  if (new Set(scopes).size !== scopes.length) return undefined;
  return { token, principal: { name, scopes } };
};

/**
 * Why the entries cannot stand together, or undefined: the tokens of one principal (a rotation's
 * old and new) must grant the same scopes, or what the principal may do would depend on the token.
 */
export const conflictingEntries = (entries: readonly ApiTokenEntry[]): string | undefined => {
  const scopesOf = new Map<string, string>();
  for (const { principal } of entries) {
    if (principal === undefined) continue;
    const scopes = [...principal.scopes].sort().join('+');
    const seen = scopesOf.get(principal.name);
    if (seen !== undefined && seen !== scopes) {
      return `gives the principal ${principal.name} different scopes in two entries; a principal's tokens must have the same scopes`;
    }
    scopesOf.set(principal.name, scopes);
  }
  return undefined;
};
