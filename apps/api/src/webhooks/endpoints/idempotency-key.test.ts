import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createPlantClient } from '@org/plant-client';
import { IDEMPOTENCY_KEY_MAX, IDEMPOTENCY_KEY_TTL_MS, WEBHOOK_TESTS_PER_MINUTE } from '@org/plant-contract';
import { describe, expect, it, vi } from 'vitest';
import { deferCleanups } from '#test/cleanups';
import { expectError } from '#test/expect-error';
import { makeDataDir, startTestServer, TEST_TOKEN, type TestAppOptions } from '#test/test-server';
import { startWebhookReceiver } from '#test/webhook-receiver';
import { callApi } from '#test/webhook-service';
import { sealKeptAnswers } from '../../http/idempotency-key.ts';
import { secretBox } from '../secrets/secret-box.ts';

const defer = deferCleanups();

const start = async (options: TestAppOptions = {}) => {
  const server = await startTestServer(undefined, { allowPrivateWebhooks: true, ...options });
  defer(server.cleanup);
  return server;
};

/** A POST with an Idempotency-Key; resolves the status, the replay header and the body. */
const post = async (base: string, path: string, key: string, body?: unknown) => {
  const response = await callApi(base, path, {
    method: 'POST',
    headers: { 'idempotency-key': key, ...(body === undefined && { 'content-type': '' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    body: (await response.json()) as { id?: string; secret?: string; message?: string },
  };
};

const endpoints = async (base: string) => ((await (await callApi(base, '/webhooks')).json()) as unknown[]).length;

describe('Idempotency-Key', () => {
  it('replays the first answer of POST /webhooks, its secret included, to a retry with the same key and body', async () => {
    const { url: base } = await start();
    const key = randomUUID();
    const first = await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/hook' });
    const retry = await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/hook' });
    expect(first).toMatchObject({ status: 201, replayed: null });
    expect(retry).toStrictEqual({ status: 201, replayed: 'true', body: first.body });
    expect(retry.body.secret).toMatch(/^whsec_/);
    expect(await endpoints(base)).toBe(1);
  });

  it('replays rotate-secret: a retry does not rotate twice', async () => {
    const { url: base } = await start();
    const endpoint = await post(base, '/webhooks', randomUUID(), { url: 'http://127.0.0.1:9/hook' });
    const key = randomUUID();
    const first = await post(base, `/webhooks/${endpoint.body.id}/rotate-secret`, key);
    const retry = await post(base, `/webhooks/${endpoint.body.id}/rotate-secret`, key);
    expect(first.status).toBe(200);
    expect(retry).toStrictEqual({ status: 200, replayed: 'true', body: first.body });
    const other = await post(base, `/webhooks/${endpoint.body.id}/rotate-secret`, randomUUID());
    expect(other.body.secret).not.toBe(first.body.secret);
  });

  it('keys a body that holds an integer beyond 2^53 as any other, digit for digit', async () => {
    const { url: base } = await start();
    const key = randomUUID();
    const send = (extra: string) =>
      callApi(base, '/webhooks', {
        method: 'POST',
        headers: { 'idempotency-key': key },
        body: `{"url":"http://127.0.0.1:9/hook","note":${extra}}`,
      });
    const first = await send('9007199254740993');
    expect(first.status).toBe(201);
    const retry = await send('9007199254740993');
    expect([retry.status, retry.headers.get('idempotent-replayed')]).toStrictEqual([201, 'true']);
    // One more than the first: another body, though a double would not tell them apart.
    expect((await send('9007199254740992')).status).toBe(422);
  });

  it('answers 422 to the same key with another body or route, and keeps the first answer', async () => {
    const { url: base } = await start();
    const key = randomUUID();
    const first = await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/a' });
    const other = await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/b' });
    expect(other.status).toBe(422);
    expect(other.body).toStrictEqual({ error: 422, message: expect.stringContaining('Idempotency-Key') });
    const elsewhere = await post(base, `/webhooks/${first.body.id}/rotate-secret`, key);
    expect(elsewhere.status).toBe(422);
    expect(await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/a' })).toMatchObject({
      status: 201,
      body: first.body,
    });
    expect(await endpoints(base)).toBe(1);
  });

  it('answers 409 to a retry while the first request still runs, then replays its answer', async () => {
    const { url: base } = await start();
    const receiver = await startWebhookReceiver();
    defer(() => receiver.close());
    // The receiver holds the first test delivery: the request that sent it runs until released.
    receiver.answer('hold');
    const endpoint = await post(base, '/webhooks', randomUUID(), { url: receiver.url });
    const test = `/webhooks/${endpoint.body.id}/test`;
    const key = randomUUID();
    const first = post(base, test, key);
    await receiver.waitFor(1);
    const duplicate = await post(base, test, key);
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.message).toContain('still running');
    receiver.release(204);
    const answered = await first;
    expect(answered).toMatchObject({ status: 200, body: { delivered: true, status: 204 } });
    expect(await post(base, test, key)).toStrictEqual({ ...answered, replayed: 'true' });
    expect(receiver.received).toHaveLength(1);
  });

  it('replays a test delivery’s answer without sending it again, and keeps no 429', async () => {
    const { url: base } = await start();
    const receiver = await startWebhookReceiver();
    defer(() => receiver.close());
    const endpoint = await post(base, '/webhooks', randomUUID(), { url: receiver.url });
    const test = `/webhooks/${endpoint.body.id}/test`;
    const key = randomUUID();
    const first = await post(base, test, key);
    expect(first).toMatchObject({ status: 200, replayed: null, body: { delivered: true } });
    expect(await post(base, test, key)).toStrictEqual({ ...first, replayed: 'true' });
    expect(receiver.received).toHaveLength(1);
    // Spend the endpoint's tests this minute; the refused one's key is not kept, so it may run later.
    for (let test_ = 1; test_ < WEBHOOK_TESTS_PER_MINUTE; test_ += 1) {
      expect((await post(base, test, randomUUID())).status).toBe(200);
    }
    const limitedKey = randomUUID();
    expect((await post(base, test, limitedKey)).status).toBe(429);
    // Not a replay: the retry is judged again (and refused again, the minute not being over).
    expect(await post(base, test, limitedKey)).toMatchObject({ status: 429, replayed: null });
    expect(receiver.received).toHaveLength(WEBHOOK_TESTS_PER_MINUTE);
  });

  it('treats a key older than 24 hours as a new request', async () => {
    const { url: base } = await start();
    const key = randomUUID();
    const first = await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/a' });
    expect(first.status).toBe(201);
    vi.setSystemTime(Date.now() + IDEMPOTENCY_KEY_TTL_MS + 1_000);
    try {
      // A new request: the URL is registered already (409), not the replayed 201.
      const later = await post(base, '/webhooks', key, { url: 'http://127.0.0.1:9/a' });
      expect(later).toMatchObject({ status: 409, replayed: null });
      expect(later.body.message).toContain('already registered');
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers 400 naming the header to an overlong key, and creates nothing', async () => {
    const { url: base } = await start();
    const answer = await post(base, '/webhooks', 'k'.repeat(IDEMPOTENCY_KEY_MAX + 1), { url: 'http://127.0.0.1:9/a' });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toContain('idempotency-key');
    expect(await endpoints(base)).toBe(0);
    expect(
      (await post(base, '/webhooks', 'k'.repeat(IDEMPOTENCY_KEY_MAX), { url: 'http://127.0.0.1:9/a' })).status,
    ).toBe(201);
  });

  it('keeps the answer sealed at rest when PLANT_WEBHOOK_SECRETS_KEY is set', async () => {
    const server = await start({ webhookSecrets: secretBox(randomBytes(32)) });
    const key = randomUUID();
    const first = await post(server.url, '/webhooks', key, { url: 'http://127.0.0.1:9/a' });
    expect(await post(server.url, '/webhooks', key, { url: 'http://127.0.0.1:9/a' })).toMatchObject({
      replayed: 'true',
      body: first.body,
    });
    // On the embedded store: no file of the data directory holds the secret (PostgreSQL keeps none there).
    if (!existsSync(server.dataDir)) return;
    const secret = Buffer.from(first.body.secret as string);
    const files = readdirSync(server.dataDir).map((name) => readFileSync(join(server.dataDir, name)));
    expect(files.some((file) => file.includes(secret))).toBe(false);
  });

  it('answers 500 in the Error shape, and lives on, when PLANT_WEBHOOK_SECRETS_KEY changed since the answer was kept', async () => {
    const dataDir = makeDataDir();
    const before = await startTestServer(dataDir, {
      allowPrivateWebhooks: true,
      webhookSecrets: secretBox(randomBytes(32)),
    });
    defer(before.stop);
    const key = randomUUID();
    const request = { url: 'http://127.0.0.1:9/a' };
    expect((await post(before.url, '/webhooks', key, request)).status).toBe(201);
    await before.stop();
    // Changed, then removed: neither opens the kept answer.
    for (const webhookSecrets of [secretBox(randomBytes(32)), undefined]) {
      const after = await startTestServer(dataDir, {
        allowPrivateWebhooks: true,
        ...(webhookSecrets && { webhookSecrets }),
      });
      defer(after.cleanup);
      const retry = await post(after.url, '/webhooks', key, request);
      expect(retry).toStrictEqual({
        status: 500,
        replayed: null,
        body: { error: 500, message: 'Internal server error.' },
      });
      // The process still answers (an unhandled rejection would have ended it, and this test run).
      expect(await endpoints(after.url)).toBe(1);
      await after.stop();
    }
  });

  it('answers a passing lookup failure 503 with Retry-After and keeps it not; a name that does not exist is kept', async () => {
    const failures: (string | undefined)[] = ['ETIMEOUT', 'EBUSY', 'ENOTFOUND'];
    // Fails a lookup with each code in turn, then answers a public address.
    const webhookHostResolver = async (host: string) => {
      const code = failures.shift();
      if (code === undefined) return [{ address: '93.184.215.14', family: 4 as const }];
      throw Object.assign(new Error(`${host}: ${code}.`), { code });
    };
    const { url: base } = await start({ allowPrivateWebhooks: false, webhookHostResolver });
    const request = { url: 'https://hooks.example.test/a' };
    const passing = randomUUID();
    for (const message of [
      'The name server did not answer for url host hooks.example.test in time; retry later.',
      'url host hooks.example.test cannot be looked up right now (EBUSY); retry later.',
    ]) {
      const answer = await callApi(base, '/webhooks', {
        method: 'POST',
        headers: { 'idempotency-key': passing },
        body: JSON.stringify(request),
      });
      expect([
        answer.status,
        answer.headers.get('retry-after'),
        answer.headers.get('idempotent-replayed'),
      ]).toStrictEqual([503, '1', null]);
      expect(await answer.json()).toStrictEqual({ error: 503, message });
    }
    const missing = randomUUID();
    const refused = await post(base, '/webhooks', missing, request);
    expect(refused).toMatchObject({ status: 400, replayed: null });
    expect(refused.body.message).toBe(
      'Invalid request body: url host hooks.example.test cannot be resolved (ENOTFOUND).',
    );
    // A final answer, kept: the retry gets it again though the name resolves now.
    expect(await post(base, '/webhooks', missing, request)).toStrictEqual({ ...refused, replayed: 'true' });
    // The passing failures were not kept: the same key runs the request now.
    expect(await post(base, '/webhooks', passing, request)).toMatchObject({ status: 201, replayed: null });
  });

  it('answers 429 with Retry-After to a new key once the principal has its most kept; its kept keys still replay', async () => {
    const { url: base } = await start({ idempotencyKeysPerPrincipal: 2 });
    const keys = [randomUUID(), randomUUID()];
    const first = await post(base, '/webhooks', keys[0] as string, { url: 'http://127.0.0.1:9/a' });
    await post(base, '/webhooks', keys[1] as string, { url: 'http://127.0.0.1:9/b' });
    const refused = await callApi(base, '/webhooks', {
      method: 'POST',
      headers: { 'idempotency-key': randomUUID() },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/c' }),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(86_000);
    expect(await expectError(refused, 429)).toMatch(/^This client has 2 Idempotency-Keys kept/);
    expect(await post(base, '/webhooks', keys[0] as string, { url: 'http://127.0.0.1:9/a' })).toStrictEqual({
      ...first,
      replayed: 'true',
    });
    // Without a key the request is not held.
    expect((await callApi(base, '/webhooks', { method: 'POST', body: '{"url":"http://127.0.0.1:9/c"}' })).status).toBe(
      201,
    );
  });

  it('deletes expired keys as keys are written, with no delivery running', async () => {
    const server = await start();
    const old = [randomUUID(), randomUUID()];
    for (const key of old) await post(server.url, `/webhooks`, key, { url: `http://127.0.0.1:9/${key}` });
    expect(await server.store.requests.plainKeptAnswers(10)).toHaveLength(2);
    vi.setSystemTime(Date.now() + IDEMPOTENCY_KEY_TTL_MS + 1_000);
    try {
      await post(server.url, '/webhooks', randomUUID(), { url: 'http://127.0.0.1:9/new' });
      expect(await server.store.requests.plainKeptAnswers(10)).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('seals at start the answers kept before PLANT_WEBHOOK_SECRETS_KEY was set, and replays them', async () => {
    const dataDir = makeDataDir();
    const before = await startTestServer(dataDir, { allowPrivateWebhooks: true });
    defer(before.stop);
    const key = randomUUID();
    const first = await post(before.url, '/webhooks', key, { url: 'http://127.0.0.1:9/a' });
    await before.stop();
    const secrets = secretBox(randomBytes(32));
    const after = await startTestServer(dataDir, { allowPrivateWebhooks: true, webhookSecrets: secrets });
    defer(after.cleanup);
    expect(await sealKeptAnswers(after.store.requests, secrets)).toBe(1);
    expect(await after.store.requests.plainKeptAnswers(10)).toStrictEqual([]);
    expect(await post(after.url, '/webhooks', key, { url: 'http://127.0.0.1:9/a' })).toStrictEqual({
      ...first,
      replayed: 'true',
    });
  });

  it('lets the client retry createWebhook after a lost answer: it resolves with the secret the server kept', async () => {
    const { url: base } = await start();
    let dropped: { secret: string } | undefined;
    // The first answer to the POST reaches this process, after the server stored it, and is lost.
    const fetch = async (input: string, init: RequestInit) => {
      const answer = await globalThis.fetch(input, init);
      if (init.method === 'POST' && dropped === undefined) {
        dropped = (await answer.json()) as { secret: string };
        throw new TypeError('socket hang up');
      }
      return answer;
    };
    const client = createPlantClient({ baseUrl: base, token: TEST_TOKEN, fetch });
    const created = await client.createWebhook({ url: 'http://127.0.0.1:9/hook' });
    expect(created.secret).toBe(dropped?.secret);
    expect(await client.listWebhooks()).toHaveLength(1);
  });
});
