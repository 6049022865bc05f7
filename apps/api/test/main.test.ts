import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPlantClient, type NewPlant, PlantApiError, PlantConnectionError } from '@org/plant-client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { httpRequest } from '#test/http-request';
import { type Exit, killAllMains, logLines, type MainProcess, runMain, startMain } from '#test/main-process';
import { TOKEN_HASH_FILE } from '../src/auth/api-tokens.ts';
import { SqlitePlantStore } from '../src/store/sqlite/sqlite-store.ts';

const TOKEN = 'main-test-token-0123456789abcdef';
const OTHER_TOKEN = 'main-test-other-token-0123456789';

const dataDirs: string[] = [];

const makeDataDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'plant-main-test-'));
  dataDirs.push(dir);
  return dir;
};

const stop = async (server: MainProcess): Promise<Exit> => {
  server.child.kill('SIGTERM');
  return server.exited();
};

const rejection = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => expect.unreachable('expected the request to fail'),
    (error: unknown) => error,
  );

const apiStatus = async (promise: Promise<unknown>): Promise<number> => {
  const error = await rejection(promise);
  expect(PlantApiError.isInstance(error), String(error)).toBe(true);
  return (error as PlantApiError).status;
};

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));

afterEach(async () => {
  await killAllMains();
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

afterAll(killAllMains);

describe('main: the plant store process', () => {
  it('generates a token on first start, keeps only its SHA-256, and accepts it after a restart', async () => {
    const dataDir = makeDataDir();
    const first = await startMain({ PLANT_DATA_DIR: dataDir });
    const [, token = ''] = await first.waitForStdout(/shown only this once;\n.*\n\n {2}(\S+)\n/);
    await first.waitForStdout(/curl .*\n/);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.stdout()).toContain(
      `curl -i -X POST ${first.url}/plants -H 'Authorization: Bearer ${token}' -H 'Content-Type: application/json'`,
    );
    expect(first.stdout().split(token)).toHaveLength(3); // the token line and the curl command
    expect(first.stderr()).not.toContain(token);

    const client = createPlantClient({ baseUrl: first.url, token });
    await expect(client.createPlant({ id: 1, name: 'Monstera', tag: 'indoor' })).resolves.toStrictEqual({
      name: 'Monstera',
      tag: 'indoor',
    });
    expect(
      await apiStatus(
        createPlantClient({ baseUrl: first.url, token: OTHER_TOKEN }).createPlant({ id: 2, name: 'Fern' }),
      ),
    ).toBe(401);

    const sha256 = createHash('sha256').update(token).digest('hex');
    expect(readFileSync(join(dataDir, TOKEN_HASH_FILE), 'utf8')).toBe(`${sha256}\n`);
    const assertTokenNotStored = () => {
      for (const file of filesUnder(dataDir)) expect(readFileSync(file).includes(token), file).toBe(false);
    };
    assertTokenNotStored(); // while running, with the write-ahead log present
    expect(await stop(first)).toStrictEqual({ code: 0, signal: null });
    assertTokenNotStored();

    const second = await startMain({ PLANT_DATA_DIR: dataDir });
    await second.waitForStdout(/"msg":"accepting the token generated on first start/);
    expect(second.stdout()).not.toContain(token);
    expect(second.stdout()).not.toMatch(/generated\. It is shown only this once/);
    const again = createPlantClient({ baseUrl: second.url, token });
    await expect(again.createPlant({ id: 1, name: 'Monstera', tag: 'indoor' })).resolves.toStrictEqual({
      name: 'Monstera',
      tag: 'indoor',
    });
    await expect(again.createPlant({ id: 2, name: 'Fern' })).resolves.toStrictEqual({ name: 'Fern' });
    expect(readFileSync(join(dataDir, TOKEN_HASH_FILE), 'utf8')).toBe(`${sha256}\n`);
    expect(await stop(second)).toStrictEqual({ code: 0, signal: null });
  }, 20_000);

  it('accepts every configured token, refuses any other with 401, and writes no token file', async () => {
    const dataDir = makeDataDir();
    const server = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: `${TOKEN}, ${OTHER_TOKEN}` });
    await expect(
      createPlantClient({ baseUrl: server.url, token: TOKEN }).createPlant({ id: 1, name: 'Monstera' }),
    ).resolves.toStrictEqual({ name: 'Monstera' });
    await expect(
      createPlantClient({ baseUrl: server.url, token: OTHER_TOKEN }).createPlant({ id: 1, name: 'Monstera' }),
    ).resolves.toStrictEqual({ name: 'Monstera' });
    const wrong = createPlantClient({ baseUrl: server.url, token: `${TOKEN}x` });
    expect(await apiStatus(wrong.createPlant({ id: 2, name: 'Fern' }))).toBe(401);
    expect(server.stdout()).not.toMatch(/token was generated/);
    expect(server.stdout()).not.toContain(TOKEN);
    expect(existsSync(join(dataDir, TOKEN_HASH_FILE))).toBe(false);
    expect(await stop(server)).toStrictEqual({ code: 0, signal: null });
  }, 20_000);

  it('serves JWTs alone: no token generated or written, a valid JWT with its scope accepted, others refused', async () => {
    const keys = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const jwks = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    try {
      const dataDir = makeDataDir();
      const server = await startMain({
        PLANT_DATA_DIR: dataDir,
        PLANT_API_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`,
        PLANT_API_JWT_ISSUER: 'https://issuer.test/',
        PLANT_API_JWT_AUDIENCE: 'plant-store',
        PLANT_API_JWT_ALGORITHMS: 'ES256',
      });
      const jwt = (scope: string) =>
        new SignJWT({ scope })
          .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
          .setSubject('client-7')
          .setIssuer('https://issuer.test/')
          .setAudience('plant-store')
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(keys.privateKey);
      const writer = createPlantClient({ baseUrl: server.url, token: await jwt('plants:write') });
      await expect(writer.createPlant({ id: 1, name: 'Monstera' })).resolves.toStrictEqual({ name: 'Monstera' });
      const reader = createPlantClient({ baseUrl: server.url, token: await jwt('plants:read') });
      await expect(reader.getPlant(1)).resolves.toStrictEqual({ id: 1, name: 'Monstera' });
      expect(await apiStatus(reader.createPlant({ id: 2, name: 'Fern' }))).toBe(403);
      const stranger = createPlantClient({ baseUrl: server.url, token: 'not-a-jwt-token-0123456789' });
      expect(await apiStatus(stranger.getPlant(1))).toBe(401);
      expect(server.stdout()).not.toMatch(/token was generated/);
      expect(existsSync(join(dataDir, TOKEN_HASH_FILE))).toBe(false);
      expect(await stop(server)).toStrictEqual({ code: 0, signal: null });
    } finally {
      await new Promise<void>((resolve) => jwks.close(() => resolve()));
    }
  }, 20_000);

  it('answers the preflight of an origin in PLANT_CORS_ORIGINS, and refuses another', async () => {
    const page = 'https://plants.example.com';
    const server = await startMain({
      PLANT_DATA_DIR: makeDataDir(),
      PLANT_API_TOKENS: TOKEN,
      PLANT_CORS_ORIGINS: `http://localhost:5173, ${page}`,
    });
    const preflight = (origin: string) =>
      httpRequest(`${server.url}/plants`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
    const allowed = await preflight(page);
    expect(allowed.status).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(page);
    expect((await preflight('https://other.example.com')).status).toBe(403);
    expect(await stop(server)).toStrictEqual({ code: 0, signal: null });
  }, 20_000);

  it.each([
    [
      { PLANT_CORS_ORIGINS: '*, https://plants.example.com' },
      'Invalid configuration: PLANT_CORS_ORIGINS must be * alone, or a comma-separated list of origins as scheme://host[:port] (http or https, no path, no trailing slash).',
    ],
    [{ PORT: 'abc' }, 'Invalid configuration: PORT must be a port number from 0 to 65535.'],
    [
      { LOG_LEVEL: 'loud' },
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent.',
    ],
    [
      {
        PLANT_API_JWKS_URL: 'http://idp.example.com/jwks.json',
        PLANT_API_JWT_ISSUER: 'https://idp.example.com/',
        PLANT_API_JWT_AUDIENCE: 'plant-store',
      },
      'Invalid configuration: PLANT_API_JWKS_URL must be an https URL (plain http only to a loopback host: localhost, 127.0.0.0/8, ::1).',
    ],
    [
      { PLANT_TRUST_PROXY: 'true' },
      expect.stringMatching(/^Invalid configuration: PLANT_TRUST_PROXY must be a hop count/),
    ],
  ])(
    'exits 1 with one stderr line naming the variable for %o',
    async (env, line) => {
      const dataDir = makeDataDir();
      const server = runMain({ PLANT_DATA_DIR: dataDir, ...env });
      expect(await server.exited()).toStrictEqual({ code: 1, signal: null });
      expect(server.stderr().split('\n')).toStrictEqual([line, '']);
      expect(server.stdout()).toBe('');
      // Nothing was started, so nothing was written.
      expect(readdirSync(dataDir)).toStrictEqual([]);
    },
    15_000,
  );

  it('refuses a second process on the same data directory while the first runs', async () => {
    const dataDir = makeDataDir();
    const first = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
    const second = runMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
    expect(await second.exited()).toStrictEqual({ code: 1, signal: null });
    expect(second.stderr()).toBe(
      `The data directory ${dataDir} is in use by another Plant Store process; stop it or set PLANT_DATA_DIR to another directory.\n`,
    );
    expect(second.stdout()).not.toMatch(/plant store listening/);
    await expect(
      createPlantClient({ baseUrl: first.url, token: TOKEN }).createPlant({ id: 1, name: 'Still serving' }),
    ).resolves.toStrictEqual({ name: 'Still serving' });
    expect(await stop(first)).toStrictEqual({ code: 0, signal: null });
  }, 20_000);

  it('exits 0 on SIGTERM and keeps the data for the next start', async () => {
    const dataDir = makeDataDir();
    const first = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
    const client = createPlantClient({ baseUrl: first.url, token: TOKEN });
    await client.createPlant({ id: 1, name: 'Monstera', tag: 'indoor' });
    await client.createPlant({ id: 2n ** 63n - 1n, name: 'Largest' });
    expect(await stop(first)).toStrictEqual({ code: 0, signal: null });
    expect(logLines(first.stdout()).map((line) => line.msg)).toEqual(
      expect.arrayContaining(['shutting down', 'stopped']),
    );

    const second = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
    const again = createPlantClient({ baseUrl: second.url, token: TOKEN });
    await expect(again.createPlant({ id: 1, name: 'Monstera', tag: 'indoor' })).resolves.toStrictEqual({
      name: 'Monstera',
      tag: 'indoor',
    });
    expect(await apiStatus(again.createPlant({ id: 1, name: 'Monstera' }))).toBe(409);
    expect(await apiStatus(again.createPlant({ id: 2n ** 63n - 1n, name: 'Other' }))).toBe(409);
    expect(await stop(second)).toStrictEqual({ code: 0, signal: null });
  }, 20_000);

  it('loses no acknowledged plant when killed with SIGKILL mid-load, five times over', async () => {
    const dataDir = makeDataDir();
    const plantFor = (round: number, index: number): NewPlant & { id: bigint } => {
      // Ids beyond 2^53 so that exactness is part of what survives.
      const id = 2n ** 60n + BigInt(round * 1000 + index);
      return index % 3 === 0
        ? { id, name: `Plant ${round}-${index}` }
        : { id, name: `Plant ${round}-${index}`, tag: `r${round}` };
    };
    const acknowledgedAll: (NewPlant & { id: bigint })[] = [];

    for (let round = 0; round < 5; round++) {
      const server = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
      const client = createPlantClient({ baseUrl: server.url, token: TOKEN, timeoutMs: 5_000, maxRetries: 0 });
      const acknowledged: (NewPlant & { id: bigint })[] = [];
      const failures: unknown[] = [];
      let next = 0;
      const worker = async () => {
        while (next < 300 && failures.length === 0) {
          const plant = plantFor(round, next++);
          try {
            await client.createPlant(plant);
          } catch (error) {
            failures.push(error);
            return;
          }
          acknowledged.push(plant);
          if (acknowledged.length === 150) server.child.kill('SIGKILL');
        }
      };
      await Promise.all(Array.from({ length: 20 }, worker));
      expect(await server.exited()).toStrictEqual({ code: null, signal: 'SIGKILL' });

      // The kill landed with requests in flight, and each of them failed without an answer.
      expect(acknowledged.length).toBeGreaterThanOrEqual(150);
      expect(acknowledged.length).toBeLessThan(300);
      expect(failures.length).toBeGreaterThan(0);
      for (const failure of failures) expect(PlantConnectionError.isInstance(failure), String(failure)).toBe(true);

      const store = await SqlitePlantStore.open(dataDir);
      try {
        const stored = await Promise.all(acknowledged.map((plant) => store.get(plant.id)));
        expect(stored).toStrictEqual(acknowledged);
      } finally {
        await store.close();
      }
      acknowledgedAll.push(...acknowledged);
    }

    // Through the API too: every acknowledged plant replays with 200, and different data is a 409.
    const server = await startMain({ PLANT_DATA_DIR: dataDir, PLANT_API_TOKENS: TOKEN });
    const client = createPlantClient({ baseUrl: server.url, token: TOKEN });
    const replays = await Promise.allSettled(acknowledgedAll.map((plant) => client.createPlant(plant)));
    expect(replays.filter((replay) => replay.status === 'rejected')).toStrictEqual([]);
    for (const plant of acknowledgedAll.slice(0, 5)) {
      expect(await apiStatus(client.createPlant({ ...plant, name: `${plant.name} (changed)` }))).toBe(409);
    }
    expect(await stop(server)).toStrictEqual({ code: 0, signal: null });
    // Six process starts and 1,500 fsync'd creates: a safety net, generous for a busy machine.
  }, 120_000);
});
