import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
// Through the package's entry: what an application embedding the API imports.
import { createApp, hashToken, type StoredPlant, staticTokens } from './index.ts';
import { fakeStore } from './testing/fake-store.ts';

const TOKEN = 'app-test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const listen = async (handler: express.Express): Promise<string> => {
  const listening = createServer(handler);
  server = listening;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
};

/** The app on a store that remembers plants in a Map. */
const start = () => {
  const plants = new Map<bigint, StoredPlant>();
  const app = createApp({
    store: fakeStore({
      create: async (plant) => {
        plants.set(plant.id, plant);
        return { outcome: 'created', plant };
      },
      get: async (id) => plants.get(id),
      list: async ({ limit }) => [...plants.values()].slice(0, limit),
      delete: async (id) => plants.delete(id),
    }),
    authenticate: staticTokens([hashToken(TOKEN)]),
  });
  return { app, plants };
};

describe('createApp', () => {
  it('is an Express application that never listens by itself', () => {
    const { app } = start();
    expect(typeof app.use).toBe('function');
    expect(app.get('x-powered-by')).toBe(false);
    expect(app.get('etag')).toBe(false);
  });

  it('matches contract paths case-insensitively and with a trailing slash', async () => {
    const url = await listen(start().app);
    const created = await fetch(`${url}/PLANTS/`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"id":7,"name":"Fern"}',
    });
    expect(created.status).toBe(200);
    const read = await fetch(`${url}/Plants/7/`, { headers: auth });
    expect(await read.json()).toEqual({ id: 7, name: 'Fern' });
  });

  it('answers a path parameter that is not valid percent-encoding with 400 naming the segment', async () => {
    const url = await listen(start().app);
    const response = await fetch(`${url}/plants/%zz`, { headers: auth });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 400,
      message: 'The path segment "%zz" is not valid percent-encoding.',
    });
  });

  it('never reads a body on a route that declares none', async () => {
    const { app, plants } = start();
    plants.set(1n, { id: 1n, name: 'Fern' });
    const url = await listen(app);
    const response = await fetch(`${url}/plants/1`, {
      method: 'DELETE',
      headers: { ...auth, 'content-type': 'application/json' },
      body: 'not json',
    });
    expect(response.status).toBe(204);
    expect(plants.has(1n)).toBe(false);
  });

  it('can be mounted under a prefix of another Express app, whose middleware runs first', async () => {
    const outer = express();
    const seen: string[] = [];
    outer.use((req, _res, next) => {
      seen.push(`${req.method} ${req.originalUrl}`);
      next();
    });
    const { app, plants } = start();
    for (const id of [1n, 2n, 3n]) plants.set(id, { id, name: `Plant ${id}` });
    outer.use('/store', app);
    const url = await listen(outer);
    const response = await fetch(`${url}/store/plants?limit=2`, { headers: auth });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveLength(2);
    // Relative, so it resolves under the prefix the client used.
    expect(response.headers.get('link')).toBe('<?limit=2&after=2>; rel="next"');
    expect((await fetch(`${url}/store/nowhere`)).status).toBe(404);
    expect(seen).toEqual(['GET /store/plants?limit=2', 'GET /store/nowhere']);
  });
});
