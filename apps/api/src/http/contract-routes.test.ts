import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initContract } from '@ts-rest/core';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contractRoutes, implementContract } from './contract-routes.ts';
import { errorHandler, notFound } from './error-handler.ts';
import { HttpError } from './http-error.ts';
import { readJsonBody } from './json-body.ts';

const c = initContract();
const Failure = z.object({ error: z.number(), message: z.string() });
const contract = c.router(
  {
    echo: {
      method: 'POST',
      path: '/things/:name',
      pathParams: z.object({ name: z.string().max(5, 'must be at most 5 characters') }),
      query: z.object({ n: z.string().regex(/^\d+$/, 'must be digits').optional() }),
      body: z.object({ value: z.number({ invalid_type_error: 'must be a number' }) }),
      responses: { 200: z.object({ name: z.string(), n: z.string().optional(), value: z.number() }), 400: Failure },
    },
    remove: {
      method: 'DELETE',
      path: '/things/:name',
      pathParams: z.object({ name: z.string() }),
      body: c.noBody(),
      responses: { 204: c.noBody(), 400: Failure },
    },
  },
  { strictStatusCodes: true },
);

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Serves the test contract; `authorize` refuses a request without `x-let-in`, and records bodies read. */
const start = async () => {
  const bodiesRead: unknown[] = [];
  const routes = contractRoutes(
    contract,
    implementContract(contract, {
      echo: async ({ params, query, body }) => ({ status: 200, body: { name: params.name, ...query, ...body } }),
      remove: async () => ({ status: 204, body: undefined }),
    }),
    {
      authorize: (req) => {
        if (req.headers['x-let-in'] === undefined) throw new HttpError(401, 'Not let in.');
      },
      readBody: async (req) => {
        const body = await readJsonBody(req);
        bodiesRead.push(body);
        return body;
      },
    },
  );
  const answerError = errorHandler(pino({ enabled: false }));
  server = createServer((req, res) => {
    const [pathname = '', search = ''] = (req.url ?? '').split('?');
    const answer = routes(req, res, pathname, search);
    if (answer === undefined) notFound(res);
    else answer.catch((error: unknown) => answerError(error, req, res));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const send = (path: string, init: RequestInit = {}, letIn = true) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      body: '{"value":1}',
      ...init,
      headers: { 'content-type': 'application/json', ...(letIn && { 'x-let-in': '1' }), ...init.headers },
    });
  return { send, bodiesRead };
};

describe('contractRoutes', () => {
  it('matches paths case-insensitively with an optional trailing slash, and decodes parameters', async () => {
    const { send } = await start();
    for (const path of ['/things/a%20b?n=7', '/THINGS/a%20b/?n=7']) {
      const response = await send(path);
      expect(response.status, path).toBe(200);
      expect(await response.json()).toEqual({ name: 'a b', n: '7', value: 1 });
    }
  });

  it('answers a path outside the contract with undefined, so the caller decides', async () => {
    const { send } = await start();
    expect((await send('/things')).status).toBe(404);
    expect((await send('/things/a/b')).status).toBe(404);
  });

  it('refuses a badly percent-encoded parameter with 400', async () => {
    const { send } = await start();
    const response = await send('/things/%zz');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 400, message: expect.stringMatching(/not valid percent-encoding/) });
  });

  it('authorizes before it reads the body', async () => {
    const { send, bodiesRead } = await start();
    const response = await send('/things/a', {}, false);
    expect(response.status).toBe(401);
    expect(bodiesRead).toEqual([]);
  });

  it('names path parameters first, then the query, then the body', async () => {
    const { send } = await start();
    const bad = { body: '{"value":"x"}' };
    const message = async (path: string) => ((await (await send(path, bad)).json()) as { message: string }).message;
    expect(await message('/things/toolong?n=x')).toBe('Invalid path parameters: name must be at most 5 characters.');
    expect(await message('/things/a?n=x')).toBe('Invalid query parameters: n must be digits.');
    expect(await message('/things/a')).toBe('Invalid request body: value must be a number.');
  });

  it('answers a no-body response without a body, and does not read a body the route does not declare', async () => {
    const { send, bodiesRead } = await start();
    const response = await send('/things/a', { method: 'DELETE', body: 'not json' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(bodiesRead).toEqual([]);
  });

  it('answers other methods on a known path with 405 and the Allow list', async () => {
    const { send } = await start();
    const response = await send('/things/a', { method: 'PUT' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST, DELETE, OPTIONS');
  });

  it('refuses a nested router, which it does not serve', () => {
    const nested = c.router({ inner: contract });
    expect(() => contractRoutes(nested, {} as never, { authorize: () => {}, readBody: async () => undefined })).toThrow(
      /Nested routers are not supported/,
    );
  });
});
