import { createPlantClient, NotFoundError } from '@org/plant-client';
import { verifyPlantWebhook } from '@org/plant-client/webhooks';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectError } from '#test/expect-error';
import { postPlant } from '#test/http-request';
import { type ManualClock, manualClock } from '#test/manual-clock';
import { makeDataDir, startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import { until } from '#test/until';
import { startWebhookReceiver, type WebhookReceiver } from '#test/webhook-receiver';
import { callApi as api, listDeliveries, registerEndpoint } from '#test/webhook-service';
import type { Clock } from '../../clock.ts';
import { CONFIG_DEFAULTS } from '../../config-defaults.ts';
import { createMetrics } from '../../ops/metrics.ts';
import { startWebhookDelivery } from './delivery-loop.ts';
import { createAgents, postWebhook } from './post-webhook.ts';

type Started = {
  base: string;
  store: TestServer['store'];
  metrics: ReturnType<typeof createMetrics>;
  /** Stops the delivery loop: every attempt it started has ended and is recorded. The app keeps serving. */
  stopDelivery(): Promise<void>;
  stop(): Promise<void>;
};

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type ServiceOptions = {
  allowPrivate?: boolean;
  /** The delivery loop's own setting, when it differs from registration's. */
  deliverToPrivate?: boolean;
  retryDelaysMs?: number[];
  timeoutMs?: number;
  /** The loop's and the store's; by default the system's. */
  clock?: Clock;
  /** The loop's idle poll; 50 ms unless a test needs the service's own pace. */
  pollIntervalMs?: number;
};

/** The real app and delivery loop on a SQLite store in a temporary directory, on 127.0.0.1:<ephemeral>. */
const startService = async ({
  allowPrivate = true,
  deliverToPrivate = allowPrivate,
  retryDelaysMs = [300, 300, 300],
  timeoutMs = 2_000,
  clock,
  pollIntervalMs = 50,
}: ServiceOptions = {}): Promise<Started> => {
  const metrics = createMetrics({ processMetrics: false });
  const server = await startTestServer(makeDataDir(), {
    metrics,
    allowPrivateWebhooks: allowPrivate,
    ...(clock && { storeClock: clock }),
  });
  const delivery = startWebhookDelivery({
    store: server.store,
    config: { ...CONFIG_DEFAULTS.webhooks, timeoutMs, retryDelaysMs, allowPrivate: deliverToPrivate },
    logger: pino({ enabled: false }),
    metrics,
    pollIntervalMs,
    stopGraceMs: 500,
    random: () => 0.5,
    ...(clock && { clock }),
  });
  let deliveryStopped: Promise<void> | undefined;
  const stopDelivery = () => (deliveryStopped ??= delivery.stop());
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Attempts in flight are recorded before the store closes.
    await stopDelivery();
    await server.cleanup();
  };
  cleanups.push(stop);
  return { base: server.url, store: server.store, metrics, stopDelivery, stop };
};

const receiver = async (): Promise<WebhookReceiver> => {
  const started = await startWebhookReceiver();
  cleanups.push(() => started.close());
  return started;
};

type Endpoint = { id: string; url: string; secret: string; enabled: boolean; createdAt: string; description?: string };
type Delivery = { id: string; plantId: number | bigint; status: string; attempts: number; lastStatus?: number };

const register = (base: string, url: string, description?: string) =>
  registerEndpoint<Endpoint>(base, url, { description });

const deliveries = (base: string, id: string) => listDeliveries<Delivery>(base, id);

/**
 * Moves the clock on by `stepMs` until `done` holds, reading between steps as `until` does: the
 * loop's next wait may start just after a step.
 */
const advanceUntil = (clock: ManualClock, stepMs: number, done: () => boolean | Promise<boolean>) =>
  until(
    async () => {
      await clock.advance(stepMs);
      return done();
    },
    (met) => met,
  );

/** standardwebhooks' own verification of a received request, as a receiver would run it. */
const verify = (secret: string, { body, headers }: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(body, headers as Record<string, string>);

describe('webhook management over HTTP', () => {
  it('registers, lists, reads and deletes endpoints; the secret only in the 201', async () => {
    const { base } = await startService();
    const created = await register(base, 'http://127.0.0.1:9/hook', 'Inventory sync');
    expect(created).toStrictEqual({
      id: expect.stringMatching(/^ep_[0-9a-f]{32}$/),
      url: 'http://127.0.0.1:9/hook',
      description: 'Inventory sync',
      eventTypes: ['newPlant'],
      payloadFormat: 'plain',
      enabled: true,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // The test token is the operator's, which sees every endpoint's owner.
      owner: 'operator',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const { secret: _secret, ...withoutSecret } = created;

    const listed = await api(base, '/webhooks');
    expect(listed.status).toBe(200);
    expect(await listed.json()).toStrictEqual([withoutSecret]);
    const got = await api(base, `/webhooks/${created.id}`);
    expect(await got.json()).toStrictEqual(withoutSecret);
    expect(await deliveries(base, created.id)).toStrictEqual([]);

    const deleted = await api(base, `/webhooks/${created.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    await expectError(await api(base, `/webhooks/${created.id}`), 404, /No webhook endpoint has id "ep_/);
    await expectError(await api(base, `/webhooks/${created.id}`, { method: 'DELETE' }), 404, /No webhook endpoint/);
    await expectError(await api(base, `/webhooks/${created.id}/deliveries`), 404, /No webhook endpoint/);
    expect(await (await api(base, '/webhooks')).json()).toStrictEqual([]);
  });

  it('answers bad input with the usual Error bodies', async () => {
    const { base } = await startService();
    const post = (body: string) => api(base, '/webhooks', { method: 'POST', body });
    await expectError(await post('{}'), 400, /url is required/);
    await expectError(await post('{"url":42}'), 400, /url must be a string/);
    await expectError(await post('{"url":"not a url"}'), 400, /url must be an absolute URL/);
    await expectError(await post('{"url":"ftp://127.0.0.1/"}'), 400, /url must use https \(got ftp\)/);
    await expectError(await post(`{"url":"https://x.test/${'a'.repeat(2000)}"}`), 400, /url must be at most 2000/);
    await expectError(await post('{"url":"http://127.0.0.1/","description":7}'), 400, /description must be a string/);
    await expectError(await post('[1]'), 400, /must be a JSON object/);
    const { id } = await register(base, 'http://127.0.0.1:9/hook');
    await expectError(await api(base, `/webhooks/${id}/deliveries?limit=0`), 400, /limit must be an integer from 1/);
    await expectError(await api(base, `/webhooks/${id}/deliveries?limit=abc`), 400, /limit/);
    await expectError(await api(base, '/webhooks/unknown'), 404, /No webhook endpoint has id "unknown"/);
    await expectError(
      await fetch(`${base}/webhooks`, { headers: { authorization: 'Bearer wrong-token-0123456789' } }),
      401,
    );
    await expectError(await api(base, '/webhooks', { method: 'PUT' }), 405);
  });

  it('registers at most 100 endpoints, then answers 409', async () => {
    const { base } = await startService();
    for (let index = 0; index < 100; index += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, offset) => register(base, `http://127.0.0.1:9/${index + offset}`)),
      );
    }
    const refused = await api(base, '/webhooks', { method: 'POST', body: '{"url":"http://127.0.0.1:9/extra"}' });
    await expectError(refused, 409, /At most 100 webhook endpoints/);
    expect(await (await api(base, '/webhooks')).json()).toHaveLength(100);
  });

  it('refuses private, loopback and plain-http targets without PLANT_WEBHOOKS_ALLOW_PRIVATE', async () => {
    const { base } = await startService({ allowPrivate: false });
    const post = (url: string) => api(base, '/webhooks', { method: 'POST', body: JSON.stringify({ url }) });
    await expectError(await post('http://127.0.0.1:8080/hook'), 400, /url must use https \(got http\)/);
    await expectError(await post('https://127.0.0.1/hook'), 400, /127\.0\.0\.1 is a loopback address/);
    await expectError(await post('https://[::ffff:127.0.0.1]/'), 400, /loopback address \(IPv4-mapped\)/);
    await expectError(await post('https://10.0.0.7/'), 400, /private address/);
    await expectError(await post('https://169.254.169.254/latest/meta-data/'), 400, /link-local/);
    await expectError(await post('https://100.64.0.1/'), 400, /carrier-grade NAT/);
    await expectError(await post('https://[fd00::1]/'), 400, /unique-local/);
    await expectError(await post('https://localhost:8443/'), 400, /loopback/);
    expect(await (await api(base, '/webhooks')).json()).toStrictEqual([]);
  });
});

describe('webhook delivery over HTTP', () => {
  it('POSTs each new plant, exactly, signed so that standardwebhooks verifies it; a replay announces nothing', async () => {
    const { base, metrics, stopDelivery } = await startService();
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    const id = 9223372036854775807n;
    expect((await postPlant(base, TEST_TOKEN, { id, name: 'Max 🌿', tag: 'edge' })).status).toBe(200);
    expect((await postPlant(base, TEST_TOKEN, { id: 2n, name: 'Fern' })).status).toBe(200);
    // The same plant again: 200, and no second announcement.
    expect((await postPlant(base, TEST_TOKEN, { id, name: 'Max 🌿', tag: 'edge' })).status).toBe(200);

    const received = await hook.waitFor(2);
    const bodies = received.map((request) => request.body).sort();
    expect(bodies).toStrictEqual(['{"id":2,"name":"Fern"}', '{"id":9223372036854775807,"name":"Max 🌿","tag":"edge"}']);
    for (const request of received) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{16}_\d+$/);
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(() => verify(endpoint.secret, request)).not.toThrow();
      expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request)).toThrow();
      expect(() => verify(endpoint.secret, { ...request, body: `${request.body} ` })).toThrow();
    }
    const listed = await until(
      () => deliveries(base, endpoint.id),
      (list) => list.every((delivery) => delivery.status === 'delivered'),
    );
    expect(listed.map((delivery) => delivery.plantId)).toStrictEqual([2, id]);
    expect(listed[0]).toMatchObject({ status: 'delivered', attempts: 1, lastStatus: 200 });
    expect(listed[0]).toHaveProperty('deliveredAt');
    expect(new Set(listed.map((delivery) => delivery.id))).toStrictEqual(
      new Set(received.map((request) => request.headers['webhook-id'])),
    );
    // Once stopped, every attempt the loop made has ended: a duplicate would have arrived by now.
    await stopDelivery();
    expect(hook.received).toHaveLength(2);

    const text = await metrics.registry.metrics();
    expect(text).toMatch(/plant_webhook_deliveries_total\{outcome="delivered"\} 2/);
    expect(text).toMatch(/plant_webhook_deliveries_pending 0/);
    expect(text).toMatch(/plant_webhook_oldest_pending_age_seconds 0/);
    expect(text).not.toContain(endpoint.secret.slice(6));
  });

  it('keeps retrying a receiver that is down for a while, with the same webhook-id, and delivers once it is back', async () => {
    // Retries fall due when the test moves the clock, one at a time, and within the lease (32 s):
    // no retry comes early or twice however slow the machine.
    const clock = manualClock();
    const { base } = await startService({ retryDelaysMs: [10_000, 10_000, 10_000, 10_000, 10_000], clock });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    hook.answer((_request, index) => (index < 2 ? { status: 503 } : { status: 204 }));
    await hook.stop();
    expect((await postPlant(base, TEST_TOKEN, { id: 7n, name: 'Patient' })).status).toBe(200);
    const attemptsMade = async () => (await deliveries(base, endpoint.id))[0]?.attempts ?? 0;
    /**
     * Once `attempts` are recorded, moves the clock to the next retry, then a poll at a time until
     * it is made: the loop may have read the time on the way.
     */
    const retryAfter = async (attempts: number) => {
      await until(attemptsMade, (made) => made === attempts);
      await clock.advance(10_000);
      await advanceUntil(clock, 50, async () => (await attemptsMade()) > attempts);
    };
    // Connections reset for a while…
    await retryAfter(1);
    const [refused] = await deliveries(base, endpoint.id);
    expect(refused).toMatchObject({ attempts: 2, status: 'pending', lastError: expect.stringMatching(/ECONNRESET/) });
    expect(refused).toHaveProperty('nextAttemptAt');
    // …then up, answering 503 twice, then 204.
    await hook.start();
    for (const attempts of [2, 3, 4]) await retryAfter(attempts);
    const [delivered] = await until(
      () => deliveries(base, endpoint.id),
      ([delivery]) => delivery?.status === 'delivered',
    );
    expect(delivered).toMatchObject({ status: 'delivered', lastStatus: 204, attempts: 5 });
    expect(delivered).not.toHaveProperty('lastError');
    expect(hook.received).toHaveLength(3);
    expect(new Set(hook.received.map((request) => request.headers['webhook-id']))).toStrictEqual(
      new Set([delivered?.id]),
    );
    for (const request of hook.received) expect(() => verify(endpoint.secret, request)).not.toThrow();
  });

  it('delivers several to an endpoint at once once it has answered quickly', async () => {
    const { base } = await startService();
    const hook = await receiver();
    await register(base, hook.url);
    // A new endpoint gets one at a time; each quick answer adds one, up to 4 (then more slowly).
    hook.answer((_request, index) => (index < 3 ? { status: 204 } : 'hold'));
    for (let id = 1n; id <= 3n; id++) {
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
      await hook.waitFor(Number(id));
    }
    for (let id = 4n; id <= 7n; id++) {
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
    }
    // None is answered before all four have arrived.
    await hook.waitFor(7);
    expect(hook.mostAtOnce()).toBe(4);
    hook.release();
  });

  it('claims a batch once half of what is in flight has ended, not one delivery per freed slot', async () => {
    // No poll comes by itself on this clock: only announcements and ended attempts wake the loop.
    const clock = manualClock();
    const { base, store } = await startService({ clock });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    // Three quick answers make its window 4; then each request is held until released.
    hook.answer((_request, index) => (index < 3 ? { status: 204 } : 'hold'));
    for (let id = 1n; id <= 3n; id++) {
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
      await hook.waitFor(Number(id));
    }
    await until(
      () => deliveries(base, endpoint.id),
      (listed) => listed.every(({ status }) => status === 'delivered'),
    );
    // The first is claimed as it is announced; the next three, announced while it is in flight,
    // wait for it rather than taking a claim each.
    for (let id = 4n; id <= 7n; id++) {
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
    }
    await hook.waitFor(4);
    const claims = vi.spyOn(store.webhooks, 'claimDue');
    hook.release(204);
    await hook.waitFor(7);
    const claimed = await Promise.all(claims.mock.results.map(({ value }) => value));
    expect(claimed[0]).toHaveLength(3);
    hook.release(204);
  });

  it('keeps connections to an endpoint alive: one per attempt in flight, not one per delivery', async () => {
    const { base } = await startService();
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    // One at a time, each recorded (its answer read) before the next is created: one connection
    // serves them all.
    for (let id = 1n; id <= 20n; id++) {
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
      await until(
        () => deliveries(base, endpoint.id),
        (listed) => listed.filter(({ status }) => status === 'delivered').length === Number(id),
      );
    }
    expect(hook.connections()).toBe(1);
  });

  it("sends an endpoint nothing more until its receiver's Retry-After has passed", async () => {
    const clock = manualClock();
    const { base, store } = await startService({ retryDelaysMs: [1_000, 1_000], clock });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    hook.answer((_request, index) =>
      index === 0 ? { status: 429, headers: { 'retry-after': '60' } } : { status: 204 },
    );
    expect((await postPlant(base, TEST_TOKEN, { id: 1n, name: 'First' })).status).toBe(200);
    await until(
      () => deliveries(base, endpoint.id),
      ([first]) => first?.attempts === 1,
    );
    // The announcement (or the next poll) wakes the loop: its claim, and those of every poll for
    // most of the minute, give nothing.
    const claims = vi.spyOn(store.webhooks, 'claimDue');
    expect((await postPlant(base, TEST_TOKEN, { id: 2n, name: 'Second' })).status).toBe(200);
    await advanceUntil(clock, 50, () => claims.mock.calls.length > 0);
    for (let second = 0; second < 58; second++) await clock.advance(1_000);
    const claimed = await Promise.all(claims.mock.results.map(({ value }) => value));
    expect(claimed.flat()).toHaveLength(0);
    expect(hook.received).toHaveLength(1);
    // Then the retry and the second plant go.
    await advanceUntil(clock, 1_000, () => hook.received.length === 3);
    await until(
      () => deliveries(base, endpoint.id),
      (all) => all.every((delivery) => delivery.status === 'delivered'),
    );
  });

  it('sends a rate-limited endpoint its limit a second, a second’s worth at once, and comes back as it has room', async () => {
    const clock = manualClock();
    // The service's own poll: between polls, the loop comes back when the store says there is room.
    const { base, store, stopDelivery } = await startService({ clock, pollIntervalMs: 1_000 });
    const hook = await receiver();
    const endpoint = await registerEndpoint<Endpoint>(base, hook.url, { rateLimit: 10 });
    const claimDue = store.webhooks.claimDue.bind(store.webhooks);
    const claims: { at: number; count: number }[] = [];
    vi.spyOn(store.webhooks, 'claimDue').mockImplementation(async (options) => {
      const at = clock.now();
      const claimed = await claimDue(options);
      if (claimed.length > 0) claims.push({ at, count: claimed.length });
      return claimed;
    });
    const claimedSoFar = () => claims.reduce((sum, { count }) => sum + count, 0);
    for (let id = 1n; id <= 30n; id++)
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
    // A second's worth at once, then one a tenth of a second: never more than the limit allows by
    // then, and hardly fewer (a claim may trail the clock by a step or two of this test).
    await until(
      async () => claimedSoFar(),
      (claimed) => claimed >= 10,
    );
    const start = (claims[0] as { at: number }).at;
    let mostBehind = 0;
    await advanceUntil(clock, 25, () => {
      const allowed = 10 + Math.floor((clock.now() - start) / 100);
      expect(claimedSoFar()).toBeLessThanOrEqual(allowed);
      expect(hook.received.length).toBeLessThanOrEqual(allowed);
      mostBehind = Math.max(mostBehind, Math.min(30, allowed) - claimedSoFar());
      return claimedSoFar() === 30;
    });
    expect(mostBehind).toBeLessThanOrEqual(3);
    await until(
      async () => hook.received.length,
      (received) => received === 30,
    );
    await stopDelivery();
    expect((await deliveries(base, endpoint.id)).every(({ status }) => status === 'delivered')).toBe(true);
    // Over every span, at most the limit times its length, plus the burst of one second's worth.
    for (const [from, first] of claims.entries())
      for (const [to, last] of claims.entries())
        if (to >= from)
          expect(claims.slice(from, to + 1).reduce((sum, { count }) => sum + count, 0)).toBeLessThanOrEqual(
            10 + (10 * (last.at - first.at)) / 1000,
          );
  });

  it('reports in the metrics how far behind each endpoint is, by endpoint id, while it is', async () => {
    const { base, metrics } = await startService();
    const held = await receiver();
    const healthy = await receiver();
    held.answer('hold');
    const behind = await register(base, held.url);
    const keepingUp = await register(base, healthy.url);
    expect((await postPlant(base, TEST_TOKEN, { id: 1n, name: 'Waiting' })).status).toBe(200);
    await held.waitFor(1);
    await until(
      () => deliveries(base, keepingUp.id),
      ([delivery]) => delivery?.status === 'delivered',
    );
    const lagOf = (text: string, id: string) =>
      new RegExp(`^plant_webhook_endpoint_lag_seconds\\{endpoint="${id}"\\} (\\S+)$`, 'm').exec(text)?.[1];
    // Scraped at most once a second from the store: read until the delivered one has left the set.
    const text = await until(
      () => metrics.registry.metrics(),
      (scraped) => lagOf(scraped, keepingUp.id) === undefined,
    );
    expect(Number(lagOf(text, behind.id))).toBeGreaterThanOrEqual(0);
    held.release(204);
    await until(
      () => metrics.registry.metrics(),
      (scraped) => !scraped.includes('plant_webhook_endpoint_lag_seconds{'),
    );
  });

  it('gives up after the last retry: the delivery is failed', async () => {
    const { base } = await startService({ retryDelaysMs: [100, 100] });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    hook.answer({ status: 302, headers: { location: 'http://127.0.0.1:9/elsewhere' } });
    expect((await postPlant(base, TEST_TOKEN, { id: 8n, name: 'Hopeless' })).status).toBe(200);
    const [failed] = await until(
      () => deliveries(base, endpoint.id),
      ([delivery]) => delivery?.status === 'failed',
    );
    expect(failed).toMatchObject({
      attempts: 3,
      lastStatus: 302,
      lastError: expect.stringMatching(/redirects are not followed/),
    });
    expect(failed).not.toHaveProperty('nextAttemptAt');
    // The redirect was not followed: every request went to the registered URL.
    expect(hook.received).toHaveLength(3);
  });

  it('disables an endpoint that answers 410 Gone and sends it nothing more', async () => {
    const { base, stopDelivery } = await startService();
    const gone = await receiver();
    const other = await receiver();
    const goneEndpoint = await register(base, gone.url);
    const otherEndpoint = await register(base, other.url);
    gone.answer({ status: 410 });
    expect((await postPlant(base, TEST_TOKEN, { id: 1n, name: 'First' })).status).toBe(200);
    await gone.waitFor(1);
    await until(
      async () => (await api(base, `/webhooks/${goneEndpoint.id}`)).json() as Promise<Endpoint>,
      (endpoint) => endpoint.enabled === false,
    );
    expect((await postPlant(base, TEST_TOKEN, { id: 2n, name: 'Second' })).status).toBe(200);
    await other.waitFor(2);
    // Once stopped, every attempt the loop made has ended.
    await stopDelivery();
    expect(gone.received).toHaveLength(1);
    expect(await deliveries(base, goneEndpoint.id)).toMatchObject([{ status: 'failed', lastStatus: 410 }]);
    expect((await deliveries(base, otherEndpoint.id)).map((delivery) => delivery.plantId)).toStrictEqual([2, 1]);
  });

  it('does not slow creates while a receiver hangs, and gives up on it after the timeout', async () => {
    // The attempts' timeout runs on this clock: they hang until the test moves it.
    const clock = manualClock();
    const { base } = await startService({ timeoutMs: 300, retryDelaysMs: [3_600_000], clock });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    hook.answer('hang');
    expect((await postPlant(base, TEST_TOKEN, { id: 1n, name: 'Plant 1' })).status).toBe(200);
    await hook.waitFor(1);
    // Creates are answered while an attempt hangs with no timeout to end it.
    for (let id = 2n; id <= 20n; id++)
      expect((await postPlant(base, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
    // Once its attempts time out, the endpoint gets one at a time, each after a pause of at most 10 s.
    await advanceUntil(clock, 10_000, async () => {
      const all = await deliveries(base, endpoint.id);
      return all.length === 20 && all.every((delivery) => delivery.attempts === 1);
    });
    const [last] = await deliveries(base, endpoint.id);
    expect(last).toMatchObject({ status: 'pending', lastError: 'No 2xx answer within 300 ms.' });
  });

  it('stops within its grace while a receiver hangs, cutting the attempt off', async () => {
    const clock = manualClock();
    const { base, stopDelivery } = await startService({ timeoutMs: 10_000, clock });
    const hook = await receiver();
    const endpoint = await register(base, hook.url);
    hook.answer('hang');
    expect((await postPlant(base, TEST_TOKEN, { id: 1n, name: 'Cut' })).status).toBe(200);
    await hook.waitFor(1);
    const stopped = stopDelivery();
    // The grace is 500 ms here: stop ends once it has passed, not once the 10 s timeout has.
    await clock.advance(500);
    await stopped;
    const [cut] = await deliveries(base, endpoint.id);
    expect(cut).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastError: expect.stringMatching(/^Connection failed/),
    });
  });

  it('refuses at connect time a name that resolves to a private address (DNS rebinding), and private IP literals', async () => {
    const hook = await receiver();
    const options = {
      timeoutMs: 1_000,
      allowPrivate: false,
      agents: createAgents({ allowPrivate: false, maxSockets: 1 }),
    };
    cleanups.push(async () => {
      options.agents.http.destroy();
      options.agents.https.destroy();
    });
    // The name passed registration elsewhere (or resolved publicly then); what it resolves to now decides.
    expect(await postWebhook(`https://localhost:${hook.port}/hook`, '{}', {}, options)).toStrictEqual({
      error: 'Refused to connect: localhost resolves to a loopback address.',
      refused: true,
    });
    expect(await postWebhook(`https://127.0.0.1:${hook.port}/hook`, '{}', {}, options)).toStrictEqual({
      error: 'Refused to connect: 127.0.0.1 is a loopback address.',
      refused: true,
    });
    expect(await postWebhook(`http://example.com:${hook.port}/hook`, '{}', {}, options)).toMatchObject({
      error: 'Refused to connect: http: URLs are not allowed.',
    });
    expect(hook.received).toHaveLength(0);
  });

  it('fails a delivery the address guard refuses at connect time at once, saying which rule refused', async () => {
    // Registered while the name was allowed; what it resolves to when connecting decides.
    const { base } = await startService({ deliverToPrivate: false, retryDelaysMs: [100, 100, 100] });
    const hook = await receiver();
    const endpoint = await register(base, `https://localhost:${hook.port}/hook`);
    expect((await postPlant(base, TEST_TOKEN, { id: 5n, name: 'Inside' })).status).toBe(200);
    const [failed] = await until(
      () => deliveries(base, endpoint.id),
      ([delivery]) => delivery?.status === 'failed',
    );
    expect(failed).toStrictEqual({
      id: expect.any(String),
      plantId: 5,
      type: 'newPlant',
      status: 'failed',
      attempts: 1,
      lastError: 'Refused to connect: localhost resolves to a loopback address.',
    });
    expect(hook.received).toHaveLength(0);
  });
});

describe('through @org/plant-client', () => {
  it('subscribes, sees the delivery, verifies it with verifyPlantWebhook, and unsubscribes', async () => {
    const { base } = await startService();
    const target = await receiver();
    const client = createPlantClient({ baseUrl: base, token: TEST_TOKEN });
    const endpoint = await client.createWebhook({ url: target.url, description: 'client test' });
    expect(await client.listWebhooks()).toStrictEqual([
      {
        id: endpoint.id,
        url: target.url,
        description: 'client test',
        eventTypes: ['newPlant'],
        payloadFormat: 'plain',
        enabled: true,
        createdAt: endpoint.createdAt,
        owner: 'operator',
      },
    ]);

    await client.createPlant({ id: 9007199254740993n, name: 'Fern', tag: 'client' });
    const [delivery] = await until(
      async () => (await client.listWebhookDeliveries(endpoint.id, { limit: 1 })).data,
      (list) => list[0]?.status === 'delivered',
    );
    expect(delivery).toMatchObject({ plantId: 9007199254740993n, status: 'delivered', attempts: 1 });
    const [received] = target.received;
    expect(received && verifyPlantWebhook(endpoint.secret, received.body, received.headers)).toStrictEqual({
      id: 9007199254740993n,
      name: 'Fern',
      tag: 'client',
    });

    await client.deleteWebhook(endpoint.id);
    expect(await rejectionOf(client.getWebhook(endpoint.id))).toBeInstanceOf(NotFoundError);
  });
});

const rejectionOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected the promise to reject');
    },
    (error: unknown) => error,
  );
