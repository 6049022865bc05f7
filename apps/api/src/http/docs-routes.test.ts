import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseExactJson } from '@org/plant-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '#test/test-server';

const contractFile = createRequire(import.meta.url).resolve;
const committed = readFileSync(contractFile('@org/plant-contract/openapi.json'), 'utf8');
const { version: packageVersion } = JSON.parse(readFileSync(contractFile('@org/plant-contract/package.json'), 'utf8'));
/** The interface's version: the package's, or the first release's while the package is unreleased (0.0.0). */
const version = packageVersion === '0.0.0' ? '1.0.0' : packageVersion;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.cleanup();
});

const get = (path: string, init?: RequestInit) => fetch(`${server.url}${path}`, { redirect: 'manual', ...init });

describe('GET /openapi.json', () => {
  it("answers the committed OpenAPI document, at the interface's version, without authentication", async () => {
    const response = await get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await response.text();
    expect(text).toBe(committed);
    expect(parseExactJson(text)).toMatchObject({ openapi: '3.1.0', info: { version } });
  });
});

describe('GET /docs', () => {
  it('answers an HTML page whose policy allows only this origin, and no inline script', async () => {
    const response = await get('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = response.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    const html = await response.text();
    expect(html).not.toMatch(/<script>|(src|href)="(https?:)?\/\//);
  });

  it('serves every script, style and icon the page and its initializer name, from the API itself', async () => {
    const html = await (await get('/docs')).text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map(([, url = '']) => url);
    expect(assets).toEqual(
      expect.arrayContaining(['docs/swagger-ui-bundle.js', 'docs/init.js', 'docs/swagger-ui.css']),
    );
    for (const asset of assets) {
      const response = await get(`/${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('content-type'), asset).toMatch(/javascript|css|image\/png/);
      expect((await response.arrayBuffer()).byteLength, asset).toBeGreaterThan(0);
    }
    const init = await (await get('/docs/init.js')).text();
    expect(init).toContain("'openapi.json'");
    expect(init).not.toMatch(/https?:/);
  });

  it('sends /docs/ to /docs, where the relative asset URLs resolve', async () => {
    const response = await get('/docs/');
    expect(response.status).toBe(301);
    expect(new URL(response.headers.get('location') ?? '', `${server.url}/docs/`).pathname).toBe('/docs');
  });

  it('answers other methods 405 and unknown assets 404, with the Error body', async () => {
    const post = await get('/docs', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await post.json()).toEqual({ error: 405, message: expect.stringMatching(/^POST is not allowed/) });
    const options = await get('/openapi.json', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    const missing = await get('/docs/swagger-ui.js.map');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 404, message: expect.any(String) });
  });
});
