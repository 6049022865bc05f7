import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDataDir } from '#test/test-server';
// Through the package's entry: what an application embedding the API imports.
import { createApp, hashToken, SqlitePlantStore, staticTokens } from './index.ts';

const TOKEN = 'app-test-token-0123456789abcdef';
const auth = { authorization: `Bearer ${TOKEN}` };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const listen = async (handler: express.Express): Promise<string> => {
  const listening: Server = createServer(handler);
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        listening.closeAllConnections();
        listening.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
};

/** The app on the real embedded store, in a directory of its own. */
const start = async () => {
  const dataDir = makeDataDir();
  const store = await SqlitePlantStore.open(dataDir);
  cleanups.push(async () => {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { app: createApp({ store, authenticate: staticTokens([{ hash: hashToken(TOKEN) }]) }), store };
};

const servers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'TCPServerWrap').length;

describe('createApp', () => {
  it('is an Express application that never listens by itself', async () => {
    const before = servers();
    const { app } = await start();
    expect(servers()).toBe(before);
    expect(app.get('x-powered-by')).toBe(false);
    expect(app.get('etag')).toBe(false);
    // It serves once the embedding application gives it a server.
    const url = await listen(app);
    expect(servers()).toBe(before + 1);
    expect((await fetch(`${url}/plants/1`, { headers: auth })).status).toBe(404);
  });

  it('matches contract paths case-insensitively and with a trailing slash', async () => {
    const url = await listen((await start()).app);
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
    const url = await listen((await start()).app);
    const response = await fetch(`${url}/plants/%zz`, { headers: auth });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: 400,
      message: 'The path segment "%zz" is not valid percent-encoding.',
    });
  });

  it('never reads a body on a route that declares none', async () => {
    const { app, store } = await start();
    await store.create({ id: 1n, name: 'Fern' });
    const url = await listen(app);
    const response = await fetch(`${url}/plants/1`, {
      method: 'DELETE',
      headers: { ...auth, 'content-type': 'application/json' },
      body: 'not json',
    });
    expect(response.status).toBe(204);
    expect(await store.get(1n)).toBeUndefined();
  });

  it('can be mounted under a prefix of another Express app, whose middleware runs first', async () => {
    const outer = express();
    const seen: string[] = [];
    outer.use((req, _res, next) => {
      seen.push(`${req.method} ${req.originalUrl}`);
      next();
    });
    const { app, store } = await start();
    for (const id of [1n, 2n, 3n]) await store.create({ id, name: `Plant ${id}` });
    outer.use('/store', app);
    const url = await listen(outer);
    const response = await fetch(`${url}/store/plants?limit=2`, { headers: auth });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { id: 1, name: 'Plant 1' },
      { id: 2, name: 'Plant 2' },
    ]);
    // Relative, so it resolves under the prefix the client used.
    expect(response.headers.get('link')).toBe('<?limit=2&after=2>; rel="next"');
    expect((await fetch(`${url}/store/nowhere`)).status).toBe(404);
    expect(seen).toEqual(['GET /store/plants?limit=2', 'GET /store/nowhere']);
  });
});
