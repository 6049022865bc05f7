import { type AppRouter, initContract } from '@ts-rest/core';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ApiError, Plant } from '../schemas.ts';
import { createOpenApiDocument } from './openapi-document.ts';

/**
 * The generator over route shapes the Plant Store contract does not use (yet): declared headers, a
 * deprecated route, other content types, nested routers. The contract module is replaced by the
 * router each test sets, so that a new kind of route is documented right the day it is added.
 */
const routes = vi.hoisted(() => ({ router: {} as Record<string, unknown> }));
vi.mock('../contract.ts', () => ({ contract: routes.router }));

const c = initContract();
const setRouter = (router: AppRouter) => {
  for (const key of Object.keys(routes.router)) delete routes.router[key];
  Object.assign(routes.router, router);
};
const scope = { scope: 'plants:read' } as const;

describe('the OpenAPI document of other route shapes', () => {
  beforeEach(() => {
    setRouter(
      c.router({
        parts: {
          list: {
            method: 'GET',
            path: '/things/:thingId/parts/:part',
            metadata: scope,
            deprecated: true,
            pathParams: z.object({ thingId: z.string().describe('The thing') }),
            query: z.object({ colour: z.string() }).refine(() => true),
            headers: z.object({
              'X-Trace': z.string().describe('Where the call comes from'),
              'If-Match': z.string().optional(),
              authorization: z.string(),
            }),
            responses: {
              404: c.noBody(),
              200: z.object({ count: z.number() }).array(),
              500: c.otherResponse({ contentType: 'text/plain', body: z.string() }),
            },
          },
        },
        upload: {
          method: 'POST',
          path: '/',
          metadata: scope,
          contentType: 'application/x-www-form-urlencoded',
          body: z.object({ name: z.string() }).optional(),
          responses: { 201: z.object({ name: z.string() }), 400: ApiError },
        },
        read: {
          method: 'GET',
          path: '/plain',
          metadata: scope,
          body: Plant,
          responses: { 200: c.otherResponse({ contentType: 'text/csv', body: Plant }) },
        },
      }),
    );
  });

  it('names nested routes by their keys, and tags a route by its first path segment', () => {
    const { paths, tags } = createOpenApiDocument();
    expect(paths['/things/{thingId}/parts/{part}']?.get?.operationId).toBe('parts.list');
    expect(paths['/things/{thingId}/parts/{part}']?.get?.tags).toStrictEqual(['things']);
    expect(paths['/']?.post?.tags).toStrictEqual(['default']);
    expect(tags).toStrictEqual([{ name: 'things' }, { name: 'default' }, { name: 'plain' }]);
  });

  it('documents path parameters, a query behind a refinement, and the declared headers but Authorization', () => {
    const operation = createOpenApiDocument().paths['/things/{thingId}/parts/{part}']?.get;
    expect(operation?.deprecated).toBe(true);
    expect(operation).not.toHaveProperty('summary');
    expect(operation).not.toHaveProperty('description');
    expect(operation?.parameters).toStrictEqual([
      { name: 'thingId', in: 'path', required: true, description: 'The thing', schema: { type: 'string' } },
      { name: 'part', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'colour', in: 'query', required: true, schema: { type: 'string' } },
      {
        name: 'X-Trace',
        in: 'header',
        required: true,
        description: 'Where the call comes from',
        schema: { type: 'string' },
      },
      { name: 'If-Match', in: 'header', required: false, schema: { type: 'string' } },
    ]);
  });

  it('documents each response in status order, with its own content type', () => {
    const { responses } = createOpenApiDocument().paths['/things/{thingId}/parts/{part}']?.get ?? {};
    const header = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
    expect(Object.keys(responses ?? {})).toStrictEqual(['200', '404', '500']);
    expect(responses?.['200']).toStrictEqual({
      description: 'successful list response',
      headers: header,
      content: {
        'application/json': {
          schema: {
            type: 'array',
            items: { type: 'object', properties: { count: { type: 'number' } }, required: ['count'] },
          },
        },
      },
    });
    expect(responses?.['404']).toStrictEqual({ description: 'unexpected error', headers: header });
    expect(responses?.['500']?.content).toStrictEqual({
      'text/plain': { schema: { type: 'string' }, example: { error: 500, message: 'Internal server error.' } },
    });
  });

  it('documents an optional body of its own content type, and no body on a GET', () => {
    const { paths } = createOpenApiDocument();
    expect(paths['/']?.post?.requestBody).toStrictEqual({
      required: false,
      content: {
        'application/x-www-form-urlencoded': {
          schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
    });
    expect(paths['/']?.post?.responses['201']?.description).toBe('successful response');
    expect(paths['/plain']?.get).not.toHaveProperty('requestBody');
    expect(paths['/plain']?.get?.responses['200']).toMatchObject({
      description: 'plant response',
      content: { 'text/csv': { schema: { $ref: '#/components/schemas/Plant' }, example: { name: 'Monstera' } } },
    });
    expect(paths['/plain']?.get).not.toHaveProperty('parameters');
  });

  it('describes a 405, and a failure status it has no words for as an unexpected error', () => {
    setRouter({
      odd: { method: 'GET', path: '/odd', metadata: scope, responses: { 405: ApiError, 418: ApiError } },
    });
    const { responses } = createOpenApiDocument().paths['/odd']?.get ?? {};
    expect(responses?.['405']).toMatchObject({
      description: 'unexpected error: the path does not support this method',
      content: {
        'application/json': {
          example: { error: 405, message: 'PUT is not allowed here; allowed: POST, GET, HEAD, OPTIONS.' },
        },
      },
    });
    expect(responses?.['418']).toMatchObject({
      description: 'unexpected error',
      content: { 'application/json': { example: { error: 418, message: 'The request failed.' } } },
    });
  });

  it('calls only a bodyless 2xx "no content"', () => {
    setRouter({
      odd: { method: 'GET', path: '/odd', metadata: scope, responses: { 299: c.noBody(), 300: c.noBody() } },
    });
    const { responses } = createOpenApiDocument().paths['/odd']?.get ?? {};
    expect(responses?.['299']?.description).toBe('no content');
    expect(responses?.['300']?.description).toBe('unexpected error');
  });

  it('takes a null query as none', () => {
    setRouter({
      odd: { method: 'GET', path: '/odd/:id', metadata: scope, query: null, responses: { 200: Plant } } as never,
    });
    expect(createOpenApiDocument().paths['/odd/{id}']?.get?.parameters).toStrictEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });

  it.each([
    ['pathParams', { pathParams: z.string() }],
    ['query', { query: z.string().refine(() => true) }],
    ['headers', { headers: { 'X-Trace': 'not a schema' } }],
    // Not an object at all, though it has no values that are not zod schemas either.
    ['query', { query: 42 }],
  ])('refuses %s that are not a zod object, naming them', (where, shape) => {
    setRouter({ odd: { method: 'GET', path: '/odd', metadata: scope, ...shape, responses: { 200: Plant } } as never });
    expect(() => createOpenApiDocument()).toThrow(
      new TypeError(`The ${where} of a route must be a zod object to appear in the OpenAPI document.`),
    );
  });

  it('refuses a response that is not a zod schema, naming its status', () => {
    setRouter({ odd: { method: 'GET', path: '/odd', metadata: scope, responses: { 201: 'text' } } as never });
    expect(() => createOpenApiDocument()).toThrow(
      new TypeError('Response 201 must be a zod schema to appear in the document.'),
    );
  });
});
