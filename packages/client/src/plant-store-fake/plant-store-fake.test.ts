import { IDEMPOTENCY_KEY_TTL_MS, WEBHOOK_PREVIOUS_SECRETS_MAX, WEBHOOK_TESTS_PER_MINUTE } from '@org/plant-contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  PlantConnectionError,
  PlantTimeoutError,
  RateLimitError,
  ServiceUnavailableError,
} from '../errors.ts';
import { createPlantClient } from '../plant-client.ts';
import { verifyPlantWebhook, verifyPlantWebhookEvent } from '../webhooks/verify-plant-webhook.ts';
import { createPlantStoreFake, type PlantStoreFakeOptions, type SignedDelivery } from './plant-store-fake.ts';

const BASE_URL = 'https://plants.test';
const TOKEN = 'fake-token-0123456789';

const setUp = (
  options: PlantStoreFakeOptions = {},
  clientOptions: { maxRetries?: number; timeoutMs?: number } = {},
) => {
  const fake = createPlantStoreFake({ tokens: [TOKEN], ...options });
  const client = createPlantClient({ baseUrl: BASE_URL, token: TOKEN, fetch: fake.fetch, ...clientOptions });
  return { fake, client };
};

const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected the promise to reject');
    },
    (error: unknown) => error,
  );

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

afterEach(() => {
  vi.useRealTimers();
});

describe('plants', () => {
  it('creates idempotently by id: a replay resolves again, different data is a ConflictError naming the id', async () => {
    const { fake, client } = setUp();
    expect(await client.createPlant({ id: 1, name: 'Fern', tag: 'f' })).toStrictEqual({ name: 'Fern', tag: 'f' });
    expect(await client.createPlant({ id: 1, name: 'Fern', tag: 'f' })).toStrictEqual({ name: 'Fern', tag: 'f' });
    const conflict = await rejection(client.createPlant({ id: 1, name: 'Moss' }));
    expect(ConflictError.isInstance(conflict) && conflict.message).toBe(
      'A plant with id 1 already exists with different data.',
    );
    expect(fake.plants).toStrictEqual([{ id: 1, name: 'Fern', tag: 'f' }]);
  });

  it('reads and deletes by exact int64 id, and answers 404 for an absent one', async () => {
    const { fake, client } = setUp();
    await client.createPlant({ id: 9007199254740993n, name: 'Big' });
    expect(await client.getPlant(9007199254740993n)).toStrictEqual({ id: 9007199254740993n, name: 'Big' });
    await expect(client.getPlant(9007199254740992n)).rejects.toSatisfy(NotFoundError.isInstance);
    await client.deletePlant(9007199254740993n);
    expect(fake.plants).toStrictEqual([]);
  });

  it('pages by id with a Link header, filters by tag, and the client follows the pages', async () => {
    const { fake, client } = setUp({
      plants: [
        { id: 3, name: 'Three', tag: 'a' },
        { id: -1, name: 'Minus one' },
        { id: 2n ** 63n - 1n, name: 'Max', tag: 'a' },
      ],
    });
    expect(await collect(client.listPlants({ pageSize: 1 }))).toStrictEqual(fake.plants);
    expect((await collect(client.listPlants({ tag: 'a', pageSize: 1 }))).map(({ id }) => id)).toStrictEqual([
      3,
      2n ** 63n - 1n,
    ]);
    const first = await fake.fetch(`${BASE_URL}/plants?limit=2`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(first.headers.get('link')).toBe('<?limit=2&after=3>; rel="next"');
    expect(await first.text()).toBe('[{"id":-1,"name":"Minus one"},{"id":3,"name":"Three","tag":"a"}]');
  });

  it('refuses what the service refuses, with its sentences', async () => {
    const { fake } = setUp();
    const post = (body: string, contentType = 'application/json') =>
      fake.fetch(`${BASE_URL}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': contentType },
        body,
      });
    const answers = await Promise.all([
      post('{"id":1.5,"name":""}'),
      post('{"id":1,"name":"Fern"}', 'text/plain'),
      post('{"id":1,"name":"Fern","id":2}'),
      fake.fetch(`${BASE_URL}/plants?limit=0`, { headers: { authorization: `Bearer ${TOKEN}` } }),
    ]);
    expect(await Promise.all(answers.map((answer) => answer.json()))).toStrictEqual([
      {
        error: 400,
        message:
          'Invalid request body: id must be an integer from -9223372036854775808 to 9223372036854775807; name must not be empty.',
      },
      { error: 415, message: 'Content-Type must be application/json (got "text/plain").' },
      { error: 400, message: 'The request body has the key "id" twice in one object.' },
      { error: 400, message: 'Invalid query parameters: limit must be an integer from 1 to 1000.' },
    ]);
    expect(fake.plants).toStrictEqual([]);
  });

  it('throws, naming it, for a seed plant the contract refuses', () => {
    expect(() =>
      createPlantStoreFake({
        plants: [
          { id: 1, name: 'Ok' },
          { id: 2, name: '' },
        ],
      }),
    ).toThrow('Seed plant 1 (id 2) is refused by the contract: Invalid plant: name must not be empty.');
  });

  it('forgets everything on reset but the plants it was created with', async () => {
    const { fake, client } = setUp({ plants: [{ id: 1, name: 'Seeded' }] });
    await client.createPlant({ id: 2, name: 'Created' });
    await client.createWebhook({ url: 'https://hooks.example.com/plants' });
    fake.reset();
    expect(fake.plants).toStrictEqual([{ id: 1, name: 'Seeded' }]);
    expect(fake.webhooks).toStrictEqual([]);
  });
});

describe('tokens', () => {
  it('answers 401 with the Bearer challenge for a wrong token, and 403 for a scope the token lacks', async () => {
    const fake = createPlantStoreFake({ tokens: [TOKEN, { token: 'reader-0123456789', scopes: ['plants:read'] }] });
    const wrong = await fake.fetch(`${BASE_URL}/plants`, { headers: { authorization: 'Bearer wrong-token' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe(
      'Bearer realm="plant-store", error="invalid_token", error_description="The access token is invalid."',
    );
    const reader = createPlantClient({ baseUrl: BASE_URL, token: 'reader-0123456789', fetch: fake.fetch });
    expect(await reader.listPlants()).toMatchObject({ data: [] });
    const denied = await rejection(reader.createPlant({ id: 1, name: 'Fern' }));
    expect(PermissionDeniedError.isInstance(denied) && denied.message).toBe(
      'The access token lacks the plants:write scope.',
    );
    const anonymous = createPlantClient({ baseUrl: BASE_URL, token: 'other-token-0123', fetch: fake.fetch });
    await expect(anonymous.listPlants()).rejects.toSatisfy(AuthenticationError.isInstance);
  });
});

describe('faults', () => {
  it('answers the next calls 429 with Retry-After, which the client waits out and retries', async () => {
    vi.useFakeTimers();
    const { fake, client } = setUp();
    fake.fail({ type: 'rate-limit', retryAfterSeconds: 2 }, { times: 2 });
    const created = client.createPlant({ id: 1, name: 'Fern' });
    await vi.advanceTimersByTimeAsync(3_999);
    expect(fake.plants).toStrictEqual([]);
    await vi.runAllTimersAsync();
    expect(await created).toStrictEqual({ name: 'Fern' });
  });

  it('loses the answer after storing the plant: the client retries and the replay resolves', async () => {
    vi.useFakeTimers();
    const { fake, client } = setUp();
    fake.fail({ type: 'lost-answer' }, { route: 'createPlant' });
    const created = client.createPlant({ id: 1, name: 'Fern' });
    await vi.runAllTimersAsync();
    expect(await created).toStrictEqual({ name: 'Fern' });
    expect(fake.plants).toStrictEqual([{ id: 1, name: 'Fern' }]);
  });

  it('loses the answer of a keyed POST after it ran: the retry gets it replayed, the same secret, one endpoint', async () => {
    vi.useFakeTimers();
    const { fake, client } = setUp();
    fake.fail({ type: 'lost-answer' }, { route: 'createWebhook' });
    const created = client.createWebhook({ url: 'https://hooks.example.com/plants' });
    await vi.runAllTimersAsync();
    const endpoint = await created;
    expect(fake.webhooks).toStrictEqual([expect.objectContaining({ id: endpoint.id })]);
    const replayed = await fake.fetch(`${BASE_URL}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body: '{"url":"https://hooks.example.com/other"}',
    });
    const again = await fake.fetch(`${BASE_URL}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body: '{"url":"https://hooks.example.com/other"}',
    });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toStrictEqual(await replayed.json());
    expect(fake.webhooks).toHaveLength(2);
  });

  it.each([
    [{ type: 'unavailable' } as const, ServiceUnavailableError.isInstance],
    [{ type: 'internal-error' } as const, InternalServerError.isInstance],
    [{ type: 'rate-limit' } as const, RateLimitError.isInstance],
    [{ type: 'connection-error' } as const, PlantConnectionError.isInstance],
  ])('answers %j as the client error for it, and stores nothing', async (fault, isInstance) => {
    const { fake, client } = setUp({}, { maxRetries: 0 });
    fake.fail(fault);
    await expect(client.createPlant({ id: 1, name: 'Fern' })).rejects.toSatisfy(isInstance);
    expect(fake.plants).toStrictEqual([]);
    expect(await client.createPlant({ id: 1, name: 'Fern' })).toStrictEqual({ name: 'Fern' });
  });

  it('delays an answer past the client timeout', async () => {
    vi.useFakeTimers();
    const { fake, client } = setUp({}, { maxRetries: 0, timeoutMs: 1_000 });
    fake.fail({ type: 'delay', ms: 5_000 }, { route: 'listPlants' });
    const listed = rejection(client.listPlants());
    await vi.advanceTimersByTimeAsync(1_000);
    expect(PlantTimeoutError.isInstance(await listed)).toBe(true);
  });

  it('applies a route rule only to that route, and every call with times: Infinity until cleared', async () => {
    const { fake, client } = setUp({}, { maxRetries: 0 });
    fake.fail({ type: 'internal-error' }, { route: 'getPlant', times: Number.POSITIVE_INFINITY });
    await client.createPlant({ id: 1, name: 'Fern' });
    for (let call = 0; call < 3; call += 1) await expect(client.getPlant(1)).rejects.toMatchObject({ status: 500 });
    fake.clearFaults();
    expect(await client.getPlant(1)).toStrictEqual({ id: 1, name: 'Fern' });
  });

  it('throws a clear error for an unknown route or fault in a rule', () => {
    const fake = createPlantStoreFake();
    expect(() => fake.fail({ type: 'unavailable' }, { route: 'createPlants' as 'createPlant' })).toThrow(
      /^Unknown route "createPlants" in a fault rule; the routes are createPlant, listPlants, /,
    );
    expect(() => fake.fail({ type: 'timeout' } as never)).toThrow(/^Unknown fault type "timeout"/);
    expect(() => fake.fail({ type: 'delay', ms: -1 })).toThrow(/delay fault needs ms/);
  });
});

describe('webhooks', () => {
  const url = 'https://hooks.example.com/plants';

  it('records a delivery per enabled endpoint, signed so that verifyPlantWebhook accepts it', async () => {
    const { fake, client } = setUp();
    const endpoint = await client.createWebhook({ url, description: 'inventory' });
    const paused = await client.createWebhook({ url: `${url}/paused` });
    await client.updateWebhook(paused.id, { enabled: false });
    await client.createPlant({ id: 9007199254740993n, name: 'Big' });
    await client.createPlant({ id: 9007199254740993n, name: 'Big' });

    const [delivery, ...others] = fake.deliveries();
    expect(others).toStrictEqual([]);
    expect(delivery).toMatchObject({ endpointId: endpoint.id, url, plant: { id: 9007199254740993n, name: 'Big' } });
    if (delivery === undefined) throw new Error('no delivery');
    const signed = await fake.signDelivery(delivery);
    expect(signed.url).toBe(url);
    expect(verifyPlantWebhook(endpoint.secret, signed.body, signed.headers)).toStrictEqual({
      id: 9007199254740993n,
      name: 'Big',
    });
    expect((await client.listWebhookDeliveries(endpoint.id)).data).toStrictEqual([
      { id: delivery.id, plantId: 9007199254740993n, type: 'newPlant', status: 'pending', attempts: 0 },
    ]);
  });

  it('records deletions for endpoints subscribed to them, signed in the payload format of each endpoint', async () => {
    const { fake, client } = setUp();
    const plain = await client.createWebhook({ url, eventTypes: ['plantDeleted'] });
    const standard = await client.createWebhook({
      url: `${url}/standard`,
      eventTypes: ['newPlant', 'plantDeleted'],
      payloadFormat: 'standard',
    });
    await client.createPlant({ id: 7, name: 'Fern', tag: 'shade' });
    await client.deletePlant(7);

    const signed = await Promise.all(fake.deliveries().map((delivery) => fake.signDelivery(delivery)));
    expect(signed.map(({ url: to, headers, body }) => [to, headers['webhook-event-type'], body])).toStrictEqual([
      [
        `${url}/standard`,
        'plantDeleted',
        expect.stringMatching(
          /^\{"type":"plantDeleted","timestamp":"[^"]+","data":\{"id":7,"plant":\{"id":7,"name":"Fern","tag":"shade"\}\}\}$/,
        ),
      ],
      [url, 'plantDeleted', '{"id":7,"plant":{"id":7,"name":"Fern","tag":"shade"}}'],
      [
        `${url}/standard`,
        'newPlant',
        expect.stringMatching(
          /^\{"type":"newPlant","timestamp":"[^"]+","data":\{"id":7,"name":"Fern","tag":"shade"\}\}$/,
        ),
      ],
    ]);
    const secrets = [standard.secret, plain.secret, standard.secret];
    expect(
      signed.map(({ body, headers }, index) => verifyPlantWebhookEvent(secrets[index] ?? '', body, headers)),
    ).toStrictEqual([
      { type: 'plantDeleted', id: 7n, plant: { id: 7n, name: 'Fern', tag: 'shade' } },
      { type: 'plantDeleted', id: 7n, plant: { id: 7n, name: 'Fern', tag: 'shade' } },
      { type: 'newPlant', plant: { id: 7n, name: 'Fern', tag: 'shade' } },
    ]);
    expect((await client.listWebhookDeliveries(plain.id)).data.map(({ type }) => type)).toStrictEqual(['plantDeleted']);
  });

  it('settles deliveries as the test says the receiver answered; recover and retry make them pending again', async () => {
    const { fake, client } = setUp({ now: () => new Date('2026-11-27T00:00:00Z') });
    const endpoint = await client.createWebhook({ url });
    await client.createPlant({ id: 1, name: 'Fern' });
    await client.createPlant({ id: 2, name: 'Ivy' });
    const [ivy, fern] = fake.deliveries(endpoint.id);
    if (ivy === undefined || fern === undefined) throw new Error('missing deliveries');
    fake.settleDelivery(fern.id, 'delivered');
    fake.settleDelivery(ivy.id, 'failed');
    expect((await client.listWebhookDeliveries(endpoint.id)).data).toStrictEqual([
      { id: ivy.id, plantId: 2, type: 'newPlant', status: 'failed', attempts: 1 },
      {
        id: fern.id,
        plantId: 1,
        type: 'newPlant',
        status: 'delivered',
        attempts: 1,
        deliveredAt: '2026-11-27T00:00:00.000Z',
      },
    ]);
    expect(await client.recoverWebhook(endpoint.id, { since: new Date(0) })).toStrictEqual({ requeued: 1 });
    await client.retryWebhookDelivery(endpoint.id, fern.id);
    expect(fake.deliveries(endpoint.id).map(({ status }) => status)).toStrictEqual(['pending', 'pending']);
    expect(() => fake.settleDelivery('msg_unknown', 'failed')).toThrow('No delivery has id "msg_unknown".');
  });

  it('signs with the new and the previous secret during a rotation grace', async () => {
    let now = new Date('2026-11-27T00:00:00Z');
    const { fake, client } = setUp({ now: () => now, rotationGraceMs: 60_000 });
    const endpoint = await client.createWebhook({ url });
    const { secret } = await client.rotateWebhookSecret(endpoint.id);
    await client.createPlant({ id: 1, name: 'Fern' });
    const [delivery] = fake.deliveries(endpoint.id);
    if (delivery === undefined) throw new Error('no delivery');
    const timestampSeconds = Math.floor(Date.now() / 1000);
    const during = await fake.signDelivery(delivery, { timestampSeconds });
    expect(verifyPlantWebhook(endpoint.secret, during.body, during.headers)).toStrictEqual({ id: 1n, name: 'Fern' });
    expect(verifyPlantWebhook(secret, during.body, during.headers)).toStrictEqual({ id: 1n, name: 'Fern' });
    now = new Date(now.getTime() + 60_000);
    const after = await fake.signDelivery(delivery, { timestampSeconds });
    expect(() => verifyPlantWebhook(endpoint.secret, after.body, after.headers)).toThrow();
  });

  it('answers a test delivery as delivered by default, sending nothing', async () => {
    const { client } = setUp();
    const endpoint = await client.createWebhook({ url, eventTypes: ['plantDeleted', 'newPlant'] });
    expect(await client.testWebhook(endpoint.id)).toStrictEqual({
      webhookId: expect.stringMatching(/^msg_test_[0-9a-f]{32}$/),
      eventType: 'plantDeleted',
      delivered: true,
      status: 200,
      durationMs: expect.any(Number),
    });
    await expect(client.testWebhook('ep_unknown')).rejects.toMatchObject({ status: 404 });
  });

  it('hands a signed test delivery to sendTestDelivery and reports its answer; 429 past the limit a minute', async () => {
    // The real time: the signature's timestamp is checked against it.
    let now = new Date();
    const sent: SignedDelivery[] = [];
    const { fake, client } = setUp({
      now: () => now,
      sendTestDelivery: async (delivery) => {
        sent.push(delivery);
        return sent.length === 1 ? { status: 503 } : { error: 'Connection failed: ECONNREFUSED.' };
      },
    });
    const endpoint = await client.createWebhook({ url });
    expect(await client.testWebhook(endpoint.id)).toMatchObject({
      delivered: false,
      status: 503,
      error: 'The receiver answered 503.',
    });
    const [delivery] = sent;
    expect(delivery?.url).toBe(url);
    expect(delivery?.headers['webhook-id']).toMatch(/^msg_test_/);
    expect(verifyPlantWebhook(endpoint.secret, delivery?.body ?? '', delivery?.headers ?? {})).toStrictEqual({
      id: 0n,
      name: 'Plant Store test event',
      tag: 'webhook-test',
    });
    expect(await client.testWebhook(endpoint.id)).toMatchObject({
      delivered: false,
      error: 'Connection failed: ECONNREFUSED.',
    });
    for (let test = 2; test < WEBHOOK_TESTS_PER_MINUTE; test += 1) await client.testWebhook(endpoint.id);
    const once = createPlantClient({ baseUrl: BASE_URL, token: TOKEN, fetch: fake.fetch, maxRetries: 0 });
    const limited = await rejection(once.testWebhook(endpoint.id));
    expect(RateLimitError.isInstance(limited)).toBe(true);
    expect(limited).toMatchObject({ status: 429, message: expect.stringContaining('retry after 60 s') });
    now = new Date(now.getTime() + 60_000);
    expect(await client.testWebhook(endpoint.id)).toMatchObject({ delivered: false });
  });

  it('manages endpoints as the service does: taken URLs, private targets, disabled endpoints, unknown ids', async () => {
    const { fake, client } = setUp();
    const endpoint = await client.createWebhook({ url: 'HTTPS://Hooks.Example.COM/plants#frag' });
    expect(endpoint).toMatchObject({ url, enabled: true });
    await expect(client.createWebhook({ url })).rejects.toMatchObject({
      status: 409,
      message: `The url is already registered by webhook endpoint ${endpoint.id}; change or delete that one.`,
    });
    await expect(client.createWebhook({ url: 'https://10.0.0.1/hook' })).rejects.toMatchObject({
      status: 400,
      message: 'Invalid request body: url must reach a public address: 10.0.0.1 is a private address.',
    });
    await client.updateWebhook(endpoint.id, { enabled: false });
    expect(fake.webhooks).toMatchObject([{ enabled: false, disabledReason: 'Disabled by a PATCH request.' }]);
    await expect(client.retryWebhookDelivery(endpoint.id, 'msg_1')).rejects.toMatchObject({ status: 409 });
    await expect(client.recoverWebhook(endpoint.id, { since: new Date() })).rejects.toMatchObject({ status: 409 });
    await client.updateWebhook(endpoint.id, { enabled: true, description: 'back' });
    expect(await client.recoverWebhook(endpoint.id, { since: new Date(0) })).toStrictEqual({ requeued: 0 });
    await client.deleteWebhook(endpoint.id);
    await expect(client.getWebhook(endpoint.id)).rejects.toMatchObject({
      status: 404,
      message: `No webhook endpoint has id "${endpoint.id}".`,
    });
  });
});

describe('answers at the edges', () => {
  const url = 'https://hooks.example.com/plants';
  const call = async (
    fake: ReturnType<typeof createPlantStoreFake>,
    method: string,
    path: string,
    { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const response = await fake.fetch(`${BASE_URL}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
  };

  it('names the part of the request a refusal is about: path parameters, body, query or headers', async () => {
    const { fake, client } = setUp();
    const { id } = await client.createWebhook({ url });
    const long = 'e'.repeat(101);
    const cases: [method: string, path: string, where: string, body?: unknown][] = [
      ['GET', '/plants/x1', 'path parameters'],
      ['DELETE', '/plants/x1', 'path parameters'],
      ['POST', '/webhooks', 'request body', { url: 7 }],
      ['GET', `/webhooks/${long}`, 'path parameters'],
      ['PATCH', `/webhooks/${long}`, 'path parameters', {}],
      ['POST', `/webhooks/${long}/rotate-secret`, 'path parameters'],
      ['POST', `/webhooks/${long}/recover`, 'path parameters', { since: '2026-01-01T00:00:00Z' }],
      ['POST', `/webhooks/${id}/recover`, 'request body', { since: 'yesterday' }],
      ['POST', `/webhooks/${long}/deliveries/msg_1/retry`, 'path parameters'],
      ['POST', `/webhooks/${long}/test`, 'path parameters', {}],
      ['POST', `/webhooks/${id}/test`, 'request body', { eventType: 'plantMoved' }],
      ['DELETE', `/webhooks/${long}`, 'path parameters'],
      ['GET', `/webhooks/${long}/deliveries`, 'path parameters'],
      ['GET', `/webhooks/${id}/deliveries?limit=0`, 'query parameters'],
    ];
    for (const [method, path, where, body] of cases) {
      const answer = await call(fake, method, path, { body });
      expect([answer.status, answer.body?.message.startsWith(`Invalid ${where}: `)], `${method} ${path}`).toStrictEqual(
        [400, true],
      );
    }
    const emptyKey = await call(fake, 'POST', '/webhooks', { body: { url }, headers: { 'idempotency-key': '' } });
    expect([emptyKey.status, emptyKey.body.message]).toStrictEqual([
      400,
      'Invalid headers: idempotency-key must not be empty.',
    ]);
  });

  it('answers 409 with Retry-After 1 to a key whose first request still runs, and runs a key again after a thrown send', async () => {
    // Each test delivery waits until the test answers it.
    const waiting: (() => void)[] = [];
    let fail = false;
    const { fake, client } = setUp({
      sendTestDelivery: () => {
        if (fail) return Promise.reject(new Error('the receiver adapter broke'));
        return new Promise((resolve) => waiting.push(() => resolve({ status: 204 })));
      },
    });
    const { id } = await client.createWebhook({ url });
    const headers = { 'idempotency-key': 'test-1' };
    const first = call(fake, 'POST', `/webhooks/${id}/test`, { body: {}, headers });
    await vi.waitFor(() => expect(waiting.length).toBe(1));
    const running = await call(fake, 'POST', `/webhooks/${id}/test`, { body: {}, headers });
    expect([running.status, running.headers.get('retry-after')]).toStrictEqual([409, '1']);
    waiting[0]?.();
    expect((await first).status).toBe(200);

    fail = true;
    const again = { 'idempotency-key': 'test-2' };
    await expect(call(fake, 'POST', `/webhooks/${id}/test`, { body: {}, headers: again })).rejects.toThrow(
      'the receiver adapter broke',
    );
    fail = false;
    const retried = call(fake, 'POST', `/webhooks/${id}/test`, { body: {}, headers: again });
    await vi.waitFor(() => expect(waiting.length).toBe(2));
    waiting[1]?.();
    expect((await retried).body).toMatchObject({ delivered: true, status: 204 });
  });

  it('keeps no 429 under an Idempotency-Key: once the test limit frees, the same key runs', async () => {
    let now = new Date('2026-11-27T00:00:00Z');
    const { fake, client } = setUp({ now: () => now });
    const { id } = await client.createWebhook({ url });
    for (let test = 0; test < WEBHOOK_TESTS_PER_MINUTE; test += 1) await client.testWebhook(id);
    const headers = { 'idempotency-key': 'after-the-limit' };
    expect((await call(fake, 'POST', `/webhooks/${id}/test`, { body: {}, headers })).status).toBe(429);
    now = new Date(now.getTime() + 60_000);
    const ran = await call(fake, 'POST', `/webhooks/${id}/test`, { body: {}, headers });
    expect([ran.status, ran.headers.get('idempotent-replayed')]).toStrictEqual([200, null]);
  });

  it("pages an endpoint's deliveries newest first, and the client follows the pages", async () => {
    const { fake, client } = setUp();
    const { id } = await client.createWebhook({ url });
    for (const plantId of [1, 2, 3]) await client.createPlant({ id: plantId, name: `Plant ${plantId}` });
    const listed: string[] = [];
    // Bounded: a client that asked for the first page again would go round for ever.
    for await (const delivery of client.listWebhookDeliveries(id, { limit: 2 })) {
      listed.push(delivery.id);
      if (listed.length > 3) break;
    }
    expect(listed).toStrictEqual(fake.deliveries(id).map((delivery) => delivery.id));
  });

  it('refuses to sign a delivery of an endpoint deleted since', async () => {
    const { fake, client } = setUp();
    const { id } = await client.createWebhook({ url });
    await client.createPlant({ id: 1, name: 'Fern' });
    const [delivery] = fake.deliveries();
    if (delivery === undefined) throw new Error('no delivery');
    await client.deleteWebhook(id);
    await expect(fake.signDelivery(delivery)).rejects.toThrow(new RangeError(`No webhook endpoint has id "${id}".`));
  });

  it('keeps an Idempotency-Key for exactly IDEMPOTENCY_KEY_TTL_MS', async () => {
    let now = new Date('2026-11-27T00:00:00Z');
    const { fake } = setUp({ now: () => now });
    const headers = { 'idempotency-key': 'register-1' };
    const first = await call(fake, 'POST', '/webhooks', { body: { url }, headers });
    now = new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS - 1);
    const replayed = await call(fake, 'POST', '/webhooks', { body: { url }, headers });
    expect([replayed.body.id, replayed.headers.get('idempotent-replayed')]).toStrictEqual([first.body.id, 'true']);
    now = new Date(now.getTime() + 1);
    // Expired: the request runs again, and finds its URL taken.
    expect((await call(fake, 'POST', '/webhooks', { body: { url }, headers })).status).toBe(409);
  });

  it('rejects a request whose signal already aborted, with its reason', async () => {
    const { fake } = setUp();
    const reason = new Error('caller gave up');
    await expect(
      fake.fetch(`${BASE_URL}/plants`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        signal: AbortSignal.abort(reason),
      }),
    ).rejects.toBe(reason);
  });

  it('answers a path outside basePath as it is, echoes a well-formed X-Request-Id only, and sends no type without a body', async () => {
    const { fake } = setUp({ plants: [{ id: 1, name: 'Fern' }] });
    const outside = await fake.handle(
      new Request(`${BASE_URL}/plants`, { headers: { authorization: `Bearer ${TOKEN}`, 'x-request-id': 'req-1' } }),
      { basePath: '/api' },
    );
    expect([outside.status, outside.headers.get('x-request-id')]).toStrictEqual([200, 'req-1']);
    const odd = await call(fake, 'GET', '/plants', { headers: { 'x-request-id': 'two words' } });
    expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const deleted = await call(fake, 'DELETE', '/plants/1');
    expect([deleted.status, deleted.headers.get('content-type')]).toStrictEqual([204, null]);
  });

  it('throws, naming it, for a seed entry that is no plant at all', () => {
    expect(() => createPlantStoreFake({ plants: [null as never] })).toThrow(
      /^Seed plant 0 \(id undefined\) is refused by the contract: Invalid plant: /,
    );
  });

  it('lets an endpoint keep its own URL, keeps a disabled one disabled through other changes, and drops its deliveries on delete', async () => {
    const { fake, client } = setUp();
    const kept = await client.createWebhook({ url });
    const other = await client.createWebhook({ url: `${url}/other` });
    expect((await client.updateWebhook(kept.id, { url })).url).toBe(url);
    await client.updateWebhook(kept.id, { enabled: false });
    expect(await client.updateWebhook(kept.id, { description: 'paused' })).toMatchObject({ enabled: false });
    await client.updateWebhook(kept.id, { enabled: true });
    await client.createPlant({ id: 1, name: 'Fern' });
    expect(fake.deliveries(kept.id).map(({ endpointId }) => endpointId)).toStrictEqual([kept.id]);
    expect(fake.deliveries().length).toBe(2);
    await client.deleteWebhook(kept.id);
    expect(fake.deliveries().map(({ endpointId }) => endpointId)).toStrictEqual([other.id]);
  });

  it('recovers the failed deliveries of that endpoint only, from `since` on, that instant included', async () => {
    let now = new Date('2026-11-27T00:00:00Z');
    const { fake, client } = setUp({ now: () => now });
    const endpoint = await client.createWebhook({ url });
    const other = await client.createWebhook({ url: `${url}/other` });
    await client.createPlant({ id: 1, name: 'Early' });
    now = new Date('2026-11-27T01:00:00Z');
    await client.createPlant({ id: 2, name: 'Late' });
    for (const { id } of fake.deliveries()) fake.settleDelivery(id, 'failed');
    expect(await client.recoverWebhook(endpoint.id, { since: now })).toStrictEqual({ requeued: 1 });
    expect(fake.deliveries(endpoint.id).map(({ plant, status }) => [plant.name, status])).toStrictEqual([
      ['Late', 'pending'],
      ['Early', 'failed'],
    ]);
    expect(fake.deliveries(other.id).map(({ status }) => status)).toStrictEqual(['failed', 'failed']);
  });

  it(`signs with at most ${WEBHOOK_PREVIOUS_SECRETS_MAX} previous secrets besides the current one`, async () => {
    const { fake, client } = setUp();
    const endpoint = await client.createWebhook({ url });
    for (let rotation = 0; rotation <= WEBHOOK_PREVIOUS_SECRETS_MAX + 1; rotation += 1) {
      await client.rotateWebhookSecret(endpoint.id);
    }
    await client.createPlant({ id: 1, name: 'Fern' });
    const [delivery] = fake.deliveries();
    if (delivery === undefined) throw new Error('no delivery');
    const { headers } = await fake.signDelivery(delivery);
    expect(headers['webhook-signature']?.split(' ').length).toBe(WEBHOOK_PREVIOUS_SECRETS_MAX + 1);
  });

  it('hands the test delivery over as JSON, and reports an answer without a status as an error', async () => {
    const sent: SignedDelivery[] = [];
    const { client } = setUp({
      sendTestDelivery: async (delivery) => {
        sent.push(delivery);
        return { error: 'connection refused' };
      },
    });
    const endpoint = await client.createWebhook({ url });
    const answer = await client.testWebhook(endpoint.id);
    expect(answer).toStrictEqual({
      webhookId: expect.any(String),
      eventType: 'newPlant',
      delivered: false,
      durationMs: expect.any(Number),
      error: 'connection refused',
    });
    // Measured from the send: a test handed over at once takes well under a second.
    expect(answer.durationMs).toBeLessThan(1_000);
    expect(sent[0]?.headers['content-type']).toBe('application/json');
  });

  it('grants a webhooks:admin token the webhook routes only, and names the missing scope in the challenge', async () => {
    const admin = 'admin-token-0123456789';
    const fake = createPlantStoreFake({ tokens: [{ token: admin, scopes: ['webhooks:admin'] }] });
    const client = createPlantClient({ baseUrl: BASE_URL, token: admin, fetch: fake.fetch });
    await client.createWebhook({ url });
    const refused = await fake.fetch(`${BASE_URL}/plants`, { headers: { authorization: `Bearer ${admin}` } });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('www-authenticate')).toContain('error="insufficient_scope"');
  });
});
