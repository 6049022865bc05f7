import { contract } from '@org/plant-contract';
import { Refusal } from './answers.ts';

export type RouteName = keyof typeof contract;

export const ROUTE_NAMES = Object.keys(contract) as RouteName[];

type CompiledRoute = { name: RouteName; method: string; path: string; pattern: RegExp; params: string[] };

/** As Express 4 matches a path: case-insensitive, a parameter is one non-empty segment, a trailing slash optional. */
const compile = (name: RouteName): CompiledRoute => {
  const { method, path } = contract[name];
  const params: string[] = [];
  const source = path.replace(/\/:(\w+)/g, (_match, param: string) => {
    params.push(param);
    return '/([^/]+?)';
  });
  return { name, method, path, pattern: new RegExp(`^${source}\\/?$`, 'i'), params };
};

const ROUTES = ROUTE_NAMES.map(compile);

/** The methods each contract path answers, as the service's `Allow` lists them. */
const ALLOW = new Map<string, string>();
for (const route of ROUTES) {
  const methods = route.method === 'GET' ? 'GET, HEAD' : route.method;
  const known = ALLOW.get(route.path);
  ALLOW.set(route.path, known === undefined ? methods : `${known}, ${methods}`);
}

export type Match =
  | { kind: 'route'; name: RouteName; params: Record<string, string> }
  | { kind: 'other-method'; allow: string }
  | { kind: 'not-found' };

/** Express decodes each parameter, and answers 400 when one is not valid percent-encoding. */
const decodeParam = (raw: string): string => {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new Refusal(400, `The path segment ${JSON.stringify(raw.slice(0, 40))} is not valid percent-encoding.`);
  }
};

/** The contract route a request reaches, the methods its path allows, or nothing, as the service routes it. */
export const matchRoute = (method: string, pathname: string): Match => {
  const asked = method === 'HEAD' ? 'GET' : method;
  let allow: string | undefined;
  for (const route of ROUTES) {
    const found = route.pattern.exec(pathname);
    if (!found) continue;
    // Express decodes a layer's parameters when its path matches, before it looks at the method.
    const params = Object.fromEntries(route.params.map((param, index) => [param, decodeParam(found[index + 1] ?? '')]));
    if (route.method === asked) return { kind: 'route', name: route.name, params };
    allow ??= `${ALLOW.get(route.path)}, OPTIONS`;
  }
  return allow === undefined ? { kind: 'not-found' } : { kind: 'other-method', allow };
};

/** Express's `simple` query parser (node:querystring): a repeated key becomes an array. */
export const parseQuery = (search: string): Record<string, string | string[]> => {
  // No prototype: a key named __proto__ is a key like any other.
  const query = Object.create(null) as Record<string, string | string[]>;
  for (const [key, value] of new URLSearchParams(search)) {
    const known = query[key];
    query[key] = known === undefined ? value : Array.isArray(known) ? [...known, value] : [known, value];
  }
  return query;
};
