import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { httpRequest, postPlant } from '#test/http-request';
import { logLines, MAIN_TEST_TOKEN, type MainProcess, runMain, startMain } from '#test/main-process';
import { describeWithPostgres } from '#test/postgres-test-database';
import { MAIN_AUTH as auth, processFixtures, registerEndpoint as register } from '#test/process-fixtures';
import { keyIdOf } from '../src/webhooks/secrets/secret-box.ts';

/** The real service processes (node src/main.ts) with and without PLANT_WEBHOOK_SECRETS_KEY. */
const { dataDir: makeDataDir, receiver, database: freshTestDatabase } = processFixtures('plant_webhook_secrets');

const KEY = Buffer.alloc(32, 11);
const OTHER_KEY = Buffer.alloc(32, 12);
const ENV = { PLANT_API_TOKENS: MAIN_TEST_TOKEN, PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true' };

/** Whether `haystack` holds the secret in any form a copy of the data would give it away in. */
const holdsSecret = (haystack: Buffer, secret: string): boolean => {
  const key = secret.slice('whsec_'.length);
  return [Buffer.from(secret), Buffer.from(key), Buffer.from(key, 'base64')].some((form) => haystack.includes(form));
};

const stopGracefully = async (main: MainProcess) => {
  main.child.kill('SIGTERM');
  expect(await main.exited()).toStrictEqual({ code: 0, signal: null });
};

describe('webhook secrets at rest, embedded store', () => {
  it('encrypts plain secrets on the first start with a key; without that key the service refuses to start', async () => {
    const dataDir = makeDataDir('plant-webhook-secrets-');
    const files = () => Buffer.concat(readdirSync(dataDir).map((name) => readFileSync(join(dataDir, name))));
    const hook = await receiver();

    const plain = await startMain({ ...ENV, PLANT_DATA_DIR: dataDir, NODE_ENV: 'production' });
    expect(logLines(plain.stdout())).toContainEqual(
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^PLANT_WEBHOOK_SECRETS_KEY is not set/) }),
    );
    const endpoint = await register(plain.url, hook.url);
    await stopGracefully(plain);
    expect(holdsSecret(files(), endpoint.secret)).toBe(true);

    const sealed = await startMain({
      ...ENV,
      PLANT_DATA_DIR: dataDir,
      PLANT_WEBHOOK_SECRETS_KEY: KEY.toString('base64'),
    });
    expect(logLines(sealed.stdout())).toContainEqual(
      expect.objectContaining({ msg: 'webhook signing secrets encrypted', sealed: 1, keyId: keyIdOf(KEY) }),
    );
    expect((await postPlant(sealed.url, MAIN_TEST_TOKEN, { id: 1n, name: 'Sealed' })).status).toBe(200);
    const [delivered] = await hook.waitFor(1);
    expect(() =>
      new Webhook(endpoint.secret).verify(delivered?.body ?? '', delivered?.headers as Record<string, string>),
    ).not.toThrow();
    await stopGracefully(sealed);
    expect(holdsSecret(files(), endpoint.secret)).toBe(false);

    const keyless = runMain({ ...ENV, PLANT_DATA_DIR: dataDir });
    expect(await keyless.exited()).toStrictEqual({ code: 1, signal: null });
    expect(keyless.stderr()).toContain(
      `Cannot start: Webhook secrets in the store are encrypted (key id ${keyIdOf(KEY)}): set PLANT_WEBHOOK_SECRETS_KEY to the key that encrypted them.`,
    );
    const wrongKey = runMain({
      ...ENV,
      PLANT_DATA_DIR: dataDir,
      PLANT_WEBHOOK_SECRETS_KEY: OTHER_KEY.toString('base64'),
    });
    expect(await wrongKey.exited()).toStrictEqual({ code: 1, signal: null });
    expect(wrongKey.stderr()).toContain(`encrypted with another key (id ${keyIdOf(KEY)})`);
    expect(wrongKey.stderr()).not.toContain(OTHER_KEY.toString('base64'));
  }, 40_000);
});

describeWithPostgres('webhook secrets at rest, PostgreSQL', () => {
  it('keeps no secret in the table once a key is set, for new and for existing endpoints', async () => {
    const database = await freshTestDatabase();
    const table = async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT * FROM webhook_endpoints');
        return Buffer.from(JSON.stringify(rows));
      } finally {
        await client.end();
      }
    };
    const hook = await receiver();
    const plain = await startMain({ ...ENV, DATABASE_URL: database.url });
    const existing = await register(plain.url, hook.url);
    await stopGracefully(plain);
    expect(holdsSecret(await table(), existing.secret)).toBe(true);

    const sealed = await startMain({
      ...ENV,
      DATABASE_URL: database.url,
      PLANT_WEBHOOK_SECRETS_KEY: KEY.toString('base64'),
    });
    const other = await receiver();
    const added = await register(sealed.url, other.url);
    const rotation = await httpRequest(`${sealed.url}/webhooks/${added.id}/rotate-secret`, {
      method: 'POST',
      headers: auth,
    });
    const rotated = rotation.json() as { secret: string };
    const stored = await table();
    for (const secret of [existing.secret, added.secret, rotated.secret])
      expect(holdsSecret(stored, secret)).toBe(false);
    expect(stored.toString()).toContain(`whenc_v1.${keyIdOf(KEY)}.`);

    expect((await postPlant(sealed.url, MAIN_TEST_TOKEN, { id: 1n, name: 'Sealed' })).status).toBe(200);
    const [first] = await hook.waitFor(1);
    const [second] = await other.waitFor(1);
    const verify = (secret: string, request: typeof first) =>
      new Webhook(secret).verify(request?.body ?? '', request?.headers as Record<string, string>);
    expect(() => verify(existing.secret, first)).not.toThrow();
    expect(() => verify(added.secret, second)).not.toThrow();
    expect(() => verify(rotated.secret, second)).not.toThrow();
  }, 40_000);
});
