import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConflictError, createPlantClient, NotFoundError } from '@org/plant-client';
import { verifyPlantWebhook } from '@org/plant-client/webhooks';
import { WEBHOOK_DESCRIPTION_MAX_LENGTH } from '@org/plant-contract';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { expectError } from '#test/expect-error';
import { postPlant } from '#test/http-request';
import { ON_FAKE, TEST_TOKEN } from '#test/test-server';
import { until } from '#test/until';
import { callApi, listDeliveries, registerEndpoint, startWebhookService } from '#test/webhook-service';
import { type SecretBox, secretBox } from '../secrets/secret-box.ts';

const defer = deferCleanups();
const receiver = () => deferredReceiver(defer);
const api = callApi;

type ServiceOptions = { retryDelaysMs?: number[]; rotationGraceMs?: number; secrets?: SecretBox };

/** The real app and delivery loop on a SQLite store in a temporary directory, polling every 50 ms. */
const startService = async ({ retryDelaysMs = [100, 100], rotationGraceMs, secrets }: ServiceOptions = {}) => {
  const service = await startWebhookService(
    { retryDelaysMs },
    { pollIntervalMs: 50 },
    {
      ...(secrets !== undefined && { webhookSecrets: secrets }),
      ...(rotationGraceMs !== undefined && { webhookRotationGraceMs: rotationGraceMs }),
    },
  );
  defer(service.cleanup);
  return { base: service.base, dataDir: service.server.dataDir, stop: service.stop };
};

type Endpoint = {
  id: string;
  url: string;
  secret: string;
  enabled: boolean;
  disabledReason?: string;
  createdAt: string;
  description?: string;
};
type Delivery = { id: string; plantId: number | bigint; status: string; attempts: number; lastError?: string };

const register = (base: string, url: string, description?: string) =>
  registerEndpoint<Endpoint>(base, url, { description });

const patch = (base: string, id: string, body: unknown) =>
  api(base, `/webhooks/${id}`, { method: 'PATCH', body: JSON.stringify(body) });

const deliveries = (base: string, id: string) => listDeliveries<Delivery>(base, id);

const verify = (secret: string, { body, headers }: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(body, headers as Record<string, string>);

const createPlants = async (base: string, ids: bigint[]) => {
  for (const id of ids) expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
};

describe('webhook URLs', () => {
  it('are stored and answered in WHATWG form without fragment; a second endpoint with the same URL is 409', async () => {
    const { base } = await startService();
    const created = await register(base, 'HTTP://127.0.0.1:9/a/../Hooks?x=1#fragment');
    expect(created.url).toBe('http://127.0.0.1:9/Hooks?x=1');
    expect(await (await api(base, `/webhooks/${created.id}`)).json()).toMatchObject({ url: created.url });
    const post = (url: string) => api(base, '/webhooks', { method: 'POST', body: JSON.stringify({ url }) });
    await expectError(await post('http://127.0.0.1:9/Hooks?x=1'), 409, new RegExp(`already registered.*${created.id}`));
    await expectError(
      await post('http://127.0.0.1:9/b/../Hooks?x=1#other'),
      409,
      /The url is already registered by webhook endpoint ep_/,
    );
    expect(await (await api(base, '/webhooks')).json()).toHaveLength(1);
  });

  it('with whitespace or control characters are refused, before any parsing', async () => {
    const { base } = await startService();
    const post = (url: string) => api(base, '/webhooks', { method: 'POST', body: JSON.stringify({ url }) });
    for (const url of [
      ' http://127.0.0.1:9/hook',
      'http://127.0.0.1:9/hook ',
      'http://127.0.0.1:9/ho\nok',
      'http://127.0.0.1:9/ho\tok',
      'http://127.0.0.1:9/hook\u0000',
      'http://127.0.0.1:9/a b',
    ]) {
      await expectError(await post(url), 400, /url must not contain whitespace or control characters/);
    }
    expect(await (await api(base, '/webhooks')).json()).toStrictEqual([]);
  });

  it('have a description counted in characters (code points), as the document counts it', async () => {
    const { base } = await startService();
    // 🌱 is one character and two UTF-16 code units.
    const description = '🌱'.repeat(WEBHOOK_DESCRIPTION_MAX_LENGTH);
    expect((await register(base, 'http://127.0.0.1:9/astral', description)).description).toBe(description);
    const tooLong = { url: 'http://127.0.0.1:9/longer', description: `${description}🌱` };
    await expectError(
      await api(base, '/webhooks', { method: 'POST', body: JSON.stringify(tooLong) }),
      400,
      new RegExp(`description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters`),
    );
  });

  it('registered twice at once on one store: one wins, the other is 409', async () => {
    const { base } = await startService();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        api(base, '/webhooks', { method: 'POST', body: JSON.stringify({ url: 'http://127.0.0.1:9/same' }) }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toStrictEqual([201, 409, 409, 409, 409, 409]);
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('changes url (checked and normalized), description and enabled; answers the endpoint', async () => {
    const { base } = await startService();
    const endpoint = await register(base, 'http://127.0.0.1:9/one', 'First');
    const other = await register(base, 'http://127.0.0.1:9/two');
    const { secret: _secret, ...stored } = endpoint;

    const moved = await patch(base, endpoint.id, { url: 'http://127.0.0.1:9/x/../moved#f', description: 'Moved' });
    expect(moved.status).toBe(200);
    expect(await moved.json()).toStrictEqual({ ...stored, url: 'http://127.0.0.1:9/moved', description: 'Moved' });
    const cleared = await patch(base, endpoint.id, { description: null, enabled: false });
    const { description: _description, ...withoutDescription } = stored;
    expect(await cleared.json()).toStrictEqual({
      ...withoutDescription,
      url: 'http://127.0.0.1:9/moved',
      enabled: false,
      disabledReason: 'Disabled by a PATCH request.',
    });

    await expectError(await patch(base, endpoint.id, { url: other.url }), 409, new RegExp(other.id));
    await expectError(
      await patch(base, endpoint.id, {}),
      400,
      /at least one of url, description, enabled, eventTypes, payloadFormat and rateLimit/,
    );
    await expectError(await patch(base, endpoint.id, { url: 'ftp://127.0.0.1/' }), 400, /url must use https/);
    await expectError(await patch(base, endpoint.id, { url: 'not a url' }), 400, /url must be an absolute URL/);
    await expectError(await patch(base, endpoint.id, { url: ' http://127.0.0.1/' }), 400, /url must not contain/);
    await expectError(await patch(base, endpoint.id, { enabled: 'yes' }), 400, /enabled must be true or false/);
    await expectError(await patch(base, endpoint.id, { description: 7 }), 400, /description must be a string/);
    await expectError(
      await patch(base, 'ep_unknown', { enabled: true }),
      404,
      /No webhook endpoint has id "ep_unknown"/,
    );
    // Nothing of the refused changes stuck.
    expect(await (await api(base, `/webhooks/${endpoint.id}`)).json()).toMatchObject({
      url: 'http://127.0.0.1:9/moved',
      enabled: false,
    });
  });

  it('re-enabling an endpoint disabled by 410 Gone clears the reason; recover then sends what the 410 failed, with its webhook-id', async () => {
    const { base } = await startService();
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    const before = new Date().toISOString();
    hook.answer({ status: 410 });
    await createPlants(base, [1n]);
    await hook.waitFor(1);
    const gone = await until(
      async () => (await (await api(base, `/webhooks/${endpoint.id}`)).json()) as Endpoint,
      (read) => !read.enabled,
    );
    expect(gone).toMatchObject({ enabled: false, disabledReason: 'The receiver answered 410 Gone.' });
    const [failed] = await deliveries(base, endpoint.id);
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, lastStatus: 410 });

    hook.answer({ status: 204 });
    const enabled = await patch(base, endpoint.id, { enabled: true });
    const read = (await enabled.json()) as Endpoint;
    expect(read).toMatchObject({ id: endpoint.id, enabled: true });
    expect(read).not.toHaveProperty('disabledReason');
    // Announced again from now on.
    await createPlants(base, [2n]);
    await hook.waitFor(2);
    const recovered = await api(base, `/webhooks/${endpoint.id}/recover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ since: before }),
    });
    expect(await recovered.json()).toStrictEqual({ requeued: 1 });
    const received = await hook.waitFor(3);
    expect(received[2]?.headers['webhook-id']).toBe(failed?.id);
    expect(() => verify(endpoint.secret, received[2] as never)).not.toThrow();
  });

  it('disabling holds pending deliveries (not attempted, still pending); enabling again sends them', async () => {
    const { base } = await startService({ retryDelaysMs: [100, 100, 100, 100, 100, 100, 100, 100, 100, 100] });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    hook.answer({ status: 503 });
    await createPlants(base, [1n, 2n]);
    await until(
      () => deliveries(base, endpoint.id),
      (list) => list.length === 2 && list.every((delivery) => delivery.attempts >= 1),
    );
    // Each delivery's next attempt is held at the receiver while the endpoint is disabled: then no
    // other attempt can be on its way.
    hook.answer('hold');
    await hook.waitFor(hook.received.length + 2);
    expect((await patch(base, endpoint.id, { enabled: false })).status).toBe(200);
    hook.release(503);
    const sent = hook.received.length;
    await until(
      () => deliveries(base, endpoint.id),
      (list) => list.reduce((sum, delivery) => sum + delivery.attempts, 0) === sent,
    );
    // Were it still enabled, six rounds of retries would go out meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(hook.received.length).toBe(sent);
    expect((await deliveries(base, endpoint.id)).map((delivery) => delivery.status)).toStrictEqual([
      'pending',
      'pending',
    ]);
    hook.answer({ status: 200 });
    expect((await patch(base, endpoint.id, { enabled: true })).status).toBe(200);
    await until(
      () => deliveries(base, endpoint.id),
      (list) => list.every((delivery) => delivery.status === 'delivered'),
    );
  });
  it('reads the body before the id: malformed JSON is answered as such, whatever the id, then the id is checked', async () => {
    const { base } = await startService();
    const tooLong = 'x'.repeat(101);
    const send = (id: string, body: string) => api(base, `/webhooks/${id}`, { method: 'PATCH', body });
    await expectError(await send(tooLong, '{"enabled":'), 400, /^The request body is not valid JSON/);
    await expectError(await send(tooLong, '{"enabled":1}'), 400, /^Invalid path parameters: id must be at most 100/);
    await expectError(
      await send('ep_unknown', '{"enabled":1}'),
      400,
      /^Invalid request body: enabled must be true or false/,
    );
    await expectError(await send('ep_unknown', '{"enabled":true}'), 404, /No webhook endpoint has id "ep_unknown"/);
  });
});

describe('POST /webhooks/{id}/rotate-secret', () => {
  it('answers a new secret; during the grace deliveries verify with both secrets, after it only with the new one', async () => {
    // A grace far longer than the test, then (on a second service) none: both hold however slow the machine.
    const { base } = await startService({ rotationGraceMs: 60_000 });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    const rotation = await api(base, `/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST' });
    expect(rotation.status).toBe(200);
    const { secret } = (await rotation.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(endpoint.secret);
    // Shown once: the endpoint never answers it.
    expect(JSON.stringify(await (await api(base, `/webhooks/${endpoint.id}`)).json())).not.toContain('whsec_');

    await createPlants(base, [1n]);
    const [during] = await hook.waitFor(1);
    expect(String(during?.headers['webhook-signature'])).toMatch(/^v1,\S{44} v1,\S{44}$/);
    // A receiver that still has the old secret, and one that switched already: both accept it.
    expect(verify(secret, during as never)).toStrictEqual({ id: 1, name: 'Plant 1' });
    expect(verify(endpoint.secret, during as never)).toStrictEqual({ id: 1, name: 'Plant 1' });
    expect(() => verify(`whsec_${Buffer.alloc(32, 9).toString('base64')}`, during as never)).toThrow();

    const ended = await startService({ rotationGraceMs: 0 });
    const next = await receiver();
    const nextEndpoint = await register(ended.base, next.url);
    const rotated = await api(ended.base, `/webhooks/${nextEndpoint.id}/rotate-secret`, { method: 'POST' });
    const { secret: nextSecret } = (await rotated.json()) as { secret: string };
    await createPlants(ended.base, [2n]);
    const [after] = await next.waitFor(1);
    expect(String(after?.headers['webhook-signature'])).toMatch(/^v1,\S{44}$/);
    expect(verify(nextSecret, after as never)).toStrictEqual({ id: 2, name: 'Plant 2' });
    expect(() => verify(nextEndpoint.secret, after as never)).toThrow();
  });

  it('answers 404 for an unknown endpoint', async () => {
    const { base } = await startService();
    await expectError(await api(base, '/webhooks/ep_unknown/rotate-secret', { method: 'POST' }), 404, /No webhook/);
  });

  it('keeps the first secret verifying through two rotations in a row, while its grace lasts', async () => {
    const { base } = await startService({ rotationGraceMs: 60_000 });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    const rotate = async () =>
      (
        (await (await api(base, `/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST' })).json()) as {
          secret: string;
        }
      ).secret;
    const second = await rotate();
    const third = await rotate();
    // A test delivery is signed as every delivery is (the fake signs it too): three signatures.
    expect((await api(base, `/webhooks/${endpoint.id}/test`, { method: 'POST' })).status).toBe(200);
    const [tested] = await hook.waitFor(1);
    expect(String(tested?.headers['webhook-signature'])).toMatch(/^v1,\S{44} v1,\S{44} v1,\S{44}$/);
    for (const secret of [endpoint.secret, second, third]) expect(() => verify(secret, tested as never)).not.toThrow();
    if (ON_FAKE) return;
    await createPlants(base, [1n]);
    const [, delivered] = await hook.waitFor(2);
    for (const secret of [endpoint.secret, second, third]) {
      expect(verify(secret, delivered as never)).toStrictEqual({ id: 1, name: 'Plant 1' });
    }
  });
});

describe('POST /webhooks/{id}/recover', () => {
  it('attempts again the deliveries that failed during a receiver outage, with their webhook-ids', async () => {
    const { base } = await startService({ retryDelaysMs: [50] });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    await createPlants(base, [1n]);
    await hook.waitFor(1);
    const since = new Date().toISOString();
    await hook.stop();
    await createPlants(base, [2n, 3n, 4n]);
    const failed = await until(
      () => deliveries(base, endpoint.id),
      (list) => list.filter((delivery) => delivery.status === 'failed').length === 3,
    );
    expect(failed.slice(0, 3).map((delivery) => delivery.lastError)).toStrictEqual(
      Array(3).fill('Connection failed: ECONNRESET.'),
    );

    await hook.start();
    const recovered = await api(base, `/webhooks/${endpoint.id}/recover`, {
      method: 'POST',
      body: JSON.stringify({ since }),
    });
    expect(recovered.status).toBe(202);
    expect(await recovered.json()).toStrictEqual({ requeued: 3 });
    const received = await hook.waitFor(4);
    expect(new Set(received.slice(1).map((request) => request.headers['webhook-id']))).toStrictEqual(
      new Set(failed.slice(0, 3).map((delivery) => delivery.id)),
    );
    for (const request of received) expect(() => verify(endpoint.secret, request as never)).not.toThrow();
    await until(
      () => deliveries(base, endpoint.id),
      (list) => list.every((delivery) => delivery.status === 'delivered'),
    );
    // Nothing failed is left to recover.
    const again = await api(base, `/webhooks/${endpoint.id}/recover`, {
      method: 'POST',
      body: JSON.stringify({ since }),
    });
    expect(await again.json()).toStrictEqual({ requeued: 0 });
  });

  it('answers 400 for a bad since, 404 for an unknown endpoint and 409 for a disabled one', async () => {
    const { base } = await startService();
    const endpoint = await register(base, 'http://127.0.0.1:9/hook');
    const recover = (id: string, body: unknown) =>
      api(base, `/webhooks/${id}/recover`, { method: 'POST', body: JSON.stringify(body) });
    await expectError(await recover(endpoint.id, {}), 400, /since is required/);
    await expectError(await recover(endpoint.id, { since: 'yesterday' }), 400, /since must be an RFC 3339 date-time/);
    await expectError(await recover('ep_unknown', { since: '2026-01-01T00:00:00Z' }), 404, /No webhook endpoint/);
    await patch(base, endpoint.id, { enabled: false });
    await expectError(await recover(endpoint.id, { since: '2026-01-01T00:00:00Z' }), 409, /is disabled; enable it/);
  });
});

describe('POST /webhooks/{id}/deliveries/{deliveryId}/retry', () => {
  it('attempts one delivery again now, whatever its status, with its webhook-id', async () => {
    const { base, stop } = await startService();
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    await createPlants(base, [1n, 2n]);
    await hook.waitFor(2);
    const [latest] = await until(
      () => deliveries(base, endpoint.id),
      (list) => list.every((delivery) => delivery.status === 'delivered'),
    );
    const retried = await api(base, `/webhooks/${endpoint.id}/deliveries/${latest?.id}/retry`, { method: 'POST' });
    expect(retried.status).toBe(202);
    expect(await retried.text()).toBe('');
    const received = await hook.waitFor(3);
    expect(received[2]?.headers['webhook-id']).toBe(latest?.id);
    expect(received[2]?.body).toBe('{"id":2,"name":"Plant 2"}');
    const [again] = await until(
      () => deliveries(base, endpoint.id),
      ([delivery]) => delivery?.status === 'delivered' && delivery.attempts === 2,
    );
    expect(again?.id).toBe(latest?.id);
    // Once stopped, every attempt the loop made has ended: a second one would have arrived by now.
    await stop();
    expect(hook.received).toHaveLength(3);
  });

  it('answers 404 for an unknown endpoint or delivery, and 409 for a disabled endpoint', async () => {
    const { base } = await startService();
    const endpoint = await register(base, 'http://127.0.0.1:9/hook');
    const other = await register(base, 'http://127.0.0.1:9/other');
    await createPlants(base, [1n]);
    const [delivery] = await deliveries(base, endpoint.id);
    const retry = (id: string, deliveryId: string) =>
      api(base, `/webhooks/${id}/deliveries/${deliveryId}/retry`, { method: 'POST' });
    await expectError(await retry('ep_unknown', delivery?.id ?? ''), 404, /No webhook endpoint has id/);
    await expectError(await retry(endpoint.id, 'msg_0000000000000000_1'), 404, /has no delivery with id/);
    await expectError(await retry(other.id, delivery?.id ?? ''), 404, /has no delivery with id/);
    await patch(base, endpoint.id, { enabled: false });
    await expectError(await retry(endpoint.id, delivery?.id ?? ''), 409, /is disabled/);
  });
});

describe('secrets at rest', () => {
  const key = Buffer.alloc(32, 7);

  it('with a key, the database files never contain the secret, and deliveries still verify', async () => {
    const { base, dataDir, stop } = await startService({ secrets: secretBox(key) });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    const rotated = (await (await api(base, `/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST' })).json()) as {
      secret: string;
    };
    await createPlants(base, [1n]);
    const [request] = await hook.waitFor(1);
    expect(() => verify(endpoint.secret, request as never)).not.toThrow();
    expect(() => verify(rotated.secret, request as never)).not.toThrow();
    const files = () => readdirSync(dataDir).map((name) => readFileSync(join(dataDir, name)));
    const leaks = (secret: string) => {
      const key = secret.slice('whsec_'.length);
      // The secret in any form a copy of the files could give it away in.
      const forms = [secret, key, Buffer.from(key, 'base64').toString('hex')].map((form) => Buffer.from(form));
      forms.push(Buffer.from(key, 'base64'));
      return files().some((file) => forms.some((form) => file.includes(form)));
    };
    // While running (the write-ahead log included), and once closed.
    expect(leaks(endpoint.secret)).toBe(false);
    expect(leaks(rotated.secret)).toBe(false);
    await stop();
    expect(files().length).toBeGreaterThan(0);
    expect(leaks(endpoint.secret)).toBe(false);
    expect(leaks(rotated.secret)).toBe(false);
  });
});

describe('through @org/plant-client', () => {
  it('updates, rotates, recovers and retries; verifyPlantWebhook takes both secrets while rotating', async () => {
    const { base } = await startService({ retryDelaysMs: [50] });
    const hook = await receiver();
    const client = createPlantClient({ baseUrl: base, token: TEST_TOKEN });
    const endpoint = await client.createWebhook({ url: hook.url, description: 'client' });
    const other = await client.createWebhook({ url: `${hook.url}/other` });
    expect(await rejectionOf(client.updateWebhook(other.id, { url: hook.url }))).toBeInstanceOf(ConflictError);
    await client.deleteWebhook(other.id);
    expect(await client.updateWebhook(endpoint.id, { description: null })).toStrictEqual({
      id: endpoint.id,
      url: endpoint.url,
      eventTypes: ['newPlant'],
      payloadFormat: 'plain',
      enabled: true,
      createdAt: endpoint.createdAt,
      // The client's token is the operator's, which sees every endpoint's owner.
      owner: 'operator',
    });

    const { secret } = await client.rotateWebhookSecret(endpoint.id);
    await client.createPlant({ id: 1n, name: 'Fern' });
    const [first] = await hook.waitFor(1);
    for (const secrets of [[secret, endpoint.secret], [endpoint.secret], secret])
      expect(first && verifyPlantWebhook(secrets, first.body, first.headers)).toStrictEqual({ id: 1n, name: 'Fern' });

    const since = new Date();
    await hook.stop();
    await client.createPlant({ id: 2n, name: 'Ivy' });
    const [failed] = await until(
      async () => (await client.listWebhookDeliveries(endpoint.id, { limit: 1 })).data,
      ([delivery]) => delivery?.status === 'failed',
    );
    await hook.start();
    expect(await client.recoverWebhook(endpoint.id, { since })).toStrictEqual({ requeued: 1 });
    const [, second] = await hook.waitFor(2);
    expect(second?.headers['webhook-id']).toBe(failed?.id);

    await client.retryWebhookDelivery(endpoint.id, failed?.id ?? '');
    const [, , third] = await hook.waitFor(3);
    expect(third?.headers['webhook-id']).toBe(failed?.id);
    expect(await rejectionOf(client.retryWebhookDelivery(endpoint.id, 'msg_0000000000000000_9'))).toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe('ids from the caller through @org/plant-client', () => {
  it.each(['../plants/1', 'a/b', 'a?b=1', 'a#b', '100%'])(
    'getWebhook(%j) asks for that endpoint, and the API answers 404 naming it',
    async (id) => {
      const { base } = await startService();
      const client = createPlantClient({ baseUrl: base, token: TEST_TOKEN });
      await client.createPlant({ id: 1n, name: 'Fern' });
      const error = await rejectionOf(client.getWebhook(id));
      expect(NotFoundError.isInstance(error) && error.message).toBe(
        `No webhook endpoint has id ${JSON.stringify(id)}.`,
      );
    },
  );
});

const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected the promise to reject');
    },
    (error: unknown) => error,
  );
