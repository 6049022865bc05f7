import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ParsedUrlQuery, parse as parseQuery } from 'node:querystring';
import { stringifyExactJson } from '@org/plant-contract';
import {
  type AppRoute,
  type AppRouter,
  isAppRoute,
  isAppRouteNoBody,
  type ServerInferRequest,
  type ServerInferResponses,
} from '@ts-rest/core';
import type { ZodType } from 'zod';
import { otherMethods } from './error-handler.ts';
import { HttpError, sendJson } from './http-error.ts';
import { withoutTrailingSlash } from './paths.ts';
import './request-fields.ts';
import { writeHead } from './security-headers.ts';
import { validationMessage } from './validation-message.ts';

/** A route's implementation: the request as the contract types it in, one of its responses out. */
export type RouteHandler<R extends AppRoute> = (
  request: ServerInferRequest<R> & { req: IncomingMessage; res: ServerResponse },
) => Promise<ServerInferResponses<R>>;

/** One handler per route of a (flat) contract router. */
export type ContractImplementation<T extends AppRouter> = {
  [K in keyof T]: T[K] extends AppRoute ? RouteHandler<T[K]> : never;
};

/** Ties handlers to the contract: a handler that does not follow it fails `tsc`. */
export const implementContract = <T extends AppRouter>(
  _contract: T,
  implementation: ContractImplementation<T>,
): ContractImplementation<T> => implementation;

/** Ties one handler to one route (for handlers written apart from their router). */
export const implementRoute = <R extends AppRoute>(_route: R, handler: RouteHandler<R>): RouteHandler<R> => handler;

export type ContractRoutesOptions = {
  /** Runs before the body is read or anything validated; throws an HttpError to refuse. */
  authorize: (req: IncomingMessage, query: ParsedUrlQuery) => void | Promise<void>;
  /** Reads and parses a request body, for routes that declare one. */
  readBody: (req: IncomingMessage) => Promise<unknown>;
};

type CompiledRoute = {
  route: AppRoute;
  handler: (request: Record<string, unknown>) => Promise<{ status: number; body: unknown }>;
  /** Present when the route takes a body that must be read and validated. */
  body: ZodType | undefined;
};

/** The routes sharing one path pattern, by method. */
type PathRoutes = {
  pattern: string;
  /** Lower-cased literal segments, and null where a parameter goes. */
  segments: (string | null)[];
  names: string[];
  byMethod: Map<string, CompiledRoute>;
  other: (req: IncomingMessage, res: ServerResponse) => void;
};

const isZod = (value: unknown): value is ZodType =>
  typeof value === 'object' && value !== null && typeof (value as ZodType).safeParse === 'function';

/**
 * Path parameters by name, or undefined when `parts` do not fit the pattern. Parameters are
 * decoded only once the whole path fits, so a path of another shape is never refused for them.
 */
const matchPath = ({ segments, names }: PathRoutes, parts: string[]): Record<string, string> | undefined => {
  if (parts.length !== segments.length) return undefined;
  const values: string[] = [];
  for (const [index, segment] of segments.entries()) {
    const part = parts[index] as string;
    if (segment === null) values.push(part);
    else if (segment !== part && segment !== part.toLowerCase()) return undefined;
  }
  const params: Record<string, string> = {};
  for (const [index, value] of values.entries()) {
    try {
      params[names[index] as string] = decodeURIComponent(value);
    } catch {
      throw new HttpError(400, `The path segment ${JSON.stringify(value.slice(0, 40))} is not valid percent-encoding.`);
    }
  }
  return params;
};

const check = (where: string, schema: unknown, value: unknown): unknown => {
  if (!isZod(schema)) return value;
  const result = schema.safeParse(value);
  if (!result.success) throw new HttpError(400, validationMessage(where, result.error));
  return result.data;
};

/**
 * Serves a ts-rest contract on bare node:http, as `createExpressEndpoints` would on Express: paths
 * match case-insensitively with an optional trailing slash, GET routes answer HEAD, other methods
 * on a known path get 405 (OPTIONS 204) with `Allow`. Each request is authorized, its body read
 * (when the route declares one), its path parameters, query and body validated against the
 * contract's schemas, and the handler's response written as JSON (or no body where the contract
 * says so). Express's router, middleware chain and request decoration cost more than all of that
 * together (profiled), so the hot path does without them.
 */
export const contractRoutes = <T extends AppRouter>(
  contract: T,
  implementation: ContractImplementation<T>,
  { authorize, readBody }: ContractRoutesOptions,
) => {
  const paths: PathRoutes[] = [];
  for (const [key, route] of Object.entries(contract)) {
    if (!isAppRoute(route)) throw new Error(`Nested routers are not supported (${key}).`);
    let path = paths.find((entry) => entry.pattern === route.path);
    if (!path) {
      const parts = route.path.split('/').slice(1);
      path = {
        pattern: route.path,
        segments: parts.map((part) => (part.startsWith(':') ? null : part.toLowerCase())),
        names: parts.filter((part) => part.startsWith(':')).map((part) => part.slice(1)),
        byMethod: new Map(),
        other: () => {},
      };
      paths.push(path);
    }
    const compiled: CompiledRoute = {
      route,
      handler: implementation[key] as unknown as CompiledRoute['handler'],
      body: route.method !== 'GET' && 'body' in route && isZod(route.body) ? route.body : undefined,
    };
    path.byMethod.set(route.method, compiled);
    if (route.method === 'GET') path.byMethod.set('HEAD', compiled);
  }
  for (const path of paths) path.other = otherMethods([...path.byMethod.keys()]);

  const run = async (
    { route, handler, body: bodySchema }: CompiledRoute,
    rawParams: Record<string, string>,
    search: string,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const rawQuery = search === '' ? {} : parseQuery(search);
    await authorize(req, rawQuery);
    const rawBody = bodySchema ? await readBody(req) : undefined;
    const request: Record<string, unknown> = { req, res };
    if (route.pathParams) request.params = check('path parameters', route.pathParams, rawParams);
    if (route.query) request.query = check('query parameters', route.query, rawQuery);
    if (bodySchema) request.body = check('request body', bodySchema, rawBody);
    const { status, body } = await handler(request);
    const response = route.responses[status];
    if (response !== undefined && isAppRouteNoBody(response)) {
      writeHead(res, status, []).end();
      return;
    }
    sendJson(res, status, stringifyExactJson(body));
  };

  /**
   * Answers the request when its path is one of the contract's, and returns the answer's promise
   * (which rejects with what the caller should answer instead); undefined for any other path.
   */
  return (req: IncomingMessage, res: ServerResponse, pathname: string, search: string): Promise<void> | undefined => {
    const parts = withoutTrailingSlash(pathname).split('/');
    parts.shift();
    for (const path of paths) {
      let params: Record<string, string> | undefined;
      try {
        params = matchPath(path, parts);
      } catch (error) {
        req.route = path.pattern;
        return Promise.reject(error);
      }
      if (params === undefined) continue;
      req.route = path.pattern;
      const compiled = path.byMethod.get(req.method ?? '');
      if (!compiled) {
        path.other(req, res);
        return Promise.resolve();
      }
      return run(compiled, params, search, req, res);
    }
    return undefined;
  };
};
