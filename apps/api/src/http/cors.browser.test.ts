import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { BrowserContext } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { CHROMIUM, hasChromium, launchChromium } from '#test/chromium';
import { startTestServer, TEST_TOKEN } from '#test/test-server';

const STEP_TIMEOUT_MS = 10_000;

const itWithChromium = hasChromium ? it : it.skip;
if (!hasChromium) {
  console.warn(`Skipping the CORS browser test: no Chromium at ${CHROMIUM} (install it: apt-get install chromium).`);
}

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** The client as a browser app gets it: its source and everything it imports in one ES module. */
const bundleClient = async (): Promise<string> => {
  const result = await build({
    entryPoints: [fileURLToPath(import.meta.resolve('@org/plant-client'))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'warning',
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild produced no output');
  return output.text;
};

/**
 * What the page does with the client, its outcome left in `window.outcome` as JSON. Every call has
 * no retries and a short timeout, so that a refused request fails at once.
 */
const SCENARIO = `
import { createPlantClient, PlantApiError } from '/client.js';
const params = new URL(location.href).searchParams;
const options = { baseUrl: params.get('api'), token: params.get('token'), maxRetries: 0, timeoutMs: 5000 };
const client = createPlantClient(options);
const describeError = (error) => ({
  name: error?.name,
  isApiError: error instanceof PlantApiError,
  status: error?.status,
  message: error?.message,
  requestId: error?.requestId,
  wwwAuthenticate: error?.headers?.get('www-authenticate') ?? null,
});
const run = async () => {
  if (params.get('mode') === 'other') {
    try {
      await client.getPlant(1);
      return { result: 'no error' };
    } catch (error) {
      return { error: describeError(error) };
    }
  }
  const outcome = {};
  const created = await client.createPlant({ id: 1, name: 'Fern', tag: 'browser' });
  outcome.created = { name: created.name, tag: created.tag };
  for (let id = 2; id <= 5; id += 1) await client.createPlant({ id, name: 'Plant ' + id, tag: 'browser' });
  const got = await client.getPlant(1);
  outcome.got = { id: String(got.id), name: got.name, tag: got.tag };
  outcome.listed = [];
  for await (const plant of client.listPlants({ pageSize: 2, tag: 'browser' })) outcome.listed.push(String(plant.id));
  try {
    await client.createPlant({ id: 1, name: 'Not a fern' });
  } catch (error) {
    outcome.conflict = describeError(error);
  }
  try {
    await createPlantClient({ ...options, token: 'wrong-token-0123456789abcdef' }).getPlant(1);
  } catch (error) {
    outcome.unauthorized = describeError(error);
  }
  return outcome;
};
run().then(
  (outcome) => { window.outcome = JSON.stringify(outcome); },
  (error) => { window.outcome = JSON.stringify({ failed: String(error) }); },
);
`;

/** A static server for the page and the bundle: the front-end's origin, on a port of its own. */
const startPageServer = async (bundle: string): Promise<{ origin: string; server: Server }> => {
  const page = `<!doctype html><meta charset="utf-8"><title>Plant client</title><script type="module">${SCENARIO}</script>`;
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://page').pathname;
    if (path === '/client.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    } else if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  cleanups.push(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
};

const launch = (): Promise<BrowserContext> =>
  launchChromium((cleanup) => cleanups.push(cleanup), { timeoutMs: STEP_TIMEOUT_MS });

/** Opens the page and waits for the scenario's outcome. */
const runPage = async (
  browser: BrowserContext,
  origin: string,
  api: string,
  mode: 'allowed' | 'other',
): Promise<{ outcome: Record<string, unknown>; apiRequests: string[] }> => {
  const page = await browser.newPage();
  const apiRequests: string[] = [];
  page.on('request', (request) => {
    if (request.url().startsWith(`${api}/`)) apiRequests.push(`${request.method()} ${request.url().slice(api.length)}`);
  });
  const query = new URLSearchParams({ api, token: TEST_TOKEN, mode });
  await page.goto(`${origin}/?${query}`);
  const outcome = await page.waitForFunction('window.outcome');
  return { outcome: JSON.parse((await outcome.jsonValue()) as string), apiRequests };
};

/** A typed error of the client as the page reads it. */
const typedError = (name: string, status: number, wwwAuthenticate: unknown) => ({
  name,
  isApiError: true,
  status,
  message: expect.stringMatching(/^[A-Z]/),
  // Readable only because the API exposes it to the page.
  requestId: expect.stringMatching(/.+/),
  wwwAuthenticate,
});

describe('the client in Chromium, on another origin than the API', () => {
  itWithChromium(
    'creates, gets, lists across Link pages and reads typed errors; a page on another origin is refused',
    async () => {
      const [bundle, browser] = await Promise.all([bundleClient(), launch()]);
      const allowedPage = await startPageServer(bundle);
      const otherPage = await startPageServer(bundle);
      const api = await startTestServer(undefined, { corsOrigins: [allowedPage.origin] });
      cleanups.push(() => api.cleanup());

      const allowed = await runPage(browser, allowedPage.origin, api.url, 'allowed');
      expect(allowed.outcome).toEqual({
        created: { name: 'Fern', tag: 'browser' },
        got: { id: '1', name: 'Fern', tag: 'browser' },
        listed: ['1', '2', '3', '4', '5'],
        conflict: typedError('ConflictError', 409, null),
        unauthorized: typedError('AuthenticationError', 401, expect.stringMatching(/^Bearer/)),
      });
      // Five plants by two: the client followed the Link header to the second and third page.
      expect(allowed.apiRequests.filter((request) => request.startsWith('GET /plants?')).length).toBe(3);
      expect(await api.store.get(5n)).toMatchObject({ name: 'Plant 5' });

      const other = await runPage(browser, otherPage.origin, api.url, 'other');
      // The browser refuses the answer (its preflight got 403 without CORS headers): a network error.
      expect(other.outcome).toEqual({
        error: expect.objectContaining({ name: 'PlantConnectionError', isApiError: false }),
      });
      expect(other.outcome.error).not.toMatchObject({ status: expect.anything() });
    },
    60_000,
  );
});
