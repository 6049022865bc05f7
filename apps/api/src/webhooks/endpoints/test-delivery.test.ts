import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyPlantWebhookEvent } from '@org/plant-client/webhooks';
import { WEBHOOK_TESTS_PER_MINUTE } from '@org/plant-contract';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { expectError } from '#test/expect-error';
import { SCOPED_TEST_TOKEN, startTestServer, TEST_TOKEN, type TestAppOptions } from '#test/test-server';
import { callApi, listDeliveries, registerEndpoint } from '#test/webhook-service';
import { type AppOptions, createApp } from '../../app.ts';
import { staticTokens } from '../../auth/authenticator.ts';
import { TEAM_SCOPES } from '../../auth/token-entries.ts';
import { hashToken } from '../../auth/token-hash.ts';
import type { PlantStore } from '../../store/plant-store.ts';
import { secretBox } from '../secrets/secret-box.ts';
import type { HostAddress } from '../targets/host-resolver.ts';
import { createWebhookTester } from './webhook-tester.ts';

const defer = deferCleanups();

/** Two principals' static tokens, for the replicas below. */
const REPLICA_TOKENS = ['replica-token-a-0123456789abcdef', 'replica-token-b-0123456789abcdef'] as const;

/**
 * Another replica of the service on the same store: an app of its own (its own tester, limits and
 * memory), answering TEST_TOKEN as the test server does and two principals of its own.
 */
const replica = async (store: PlantStore, options: Partial<AppOptions> = {}): Promise<string> => {
  const authenticate = staticTokens([
    { hash: hashToken(TEST_TOKEN) },
    ...REPLICA_TOKENS.map((token, n) => ({
      hash: hashToken(token),
      principal: { name: `replica-${n}`, scopes: TEAM_SCOPES },
    })),
  ]);
  const app = createApp({ allowPrivateWebhooks: true, ...options, store, authenticate });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  defer(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

const start = async (options: TestAppOptions = {}) => {
  const server = await startTestServer(undefined, { allowPrivateWebhooks: true, ...options });
  defer(server.cleanup);
  return server.url;
};

type TestResult = {
  webhookId: string;
  eventType: string;
  delivered: boolean;
  status?: number;
  durationMs: number;
  error?: string;
};

/** POST /webhooks/{id}/test, with `body` as JSON when given. */
const sendTest = (base: string, id: string, body?: unknown) =>
  callApi(base, `/webhooks/${id}/test`, {
    method: 'POST',
    ...(body === undefined ? { headers: { 'content-type': '' } } : { body: JSON.stringify(body) }),
  });

const testResult = async (response: Response): Promise<TestResult> => {
  expect(response.status).toBe(200);
  return (await response.json()) as TestResult;
};

describe('POST /webhooks/{id}/test', () => {
  it('sends one signed test event to a receiver that answers 2xx, outside the outbox', async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    receiver.answer({ status: 204 });
    const endpoint = await registerEndpoint(base, receiver.url);

    const result = await testResult(await sendTest(base, endpoint.id));

    expect(result).toStrictEqual({
      webhookId: expect.stringMatching(/^msg_test_[0-9a-f]{32}$/),
      eventType: 'newPlant',
      delivered: true,
      status: 204,
      durationMs: expect.any(Number),
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    const [received] = await receiver.waitFor(1);
    expect(received?.headers['webhook-id']).toBe(result.webhookId);
    expect(verifyPlantWebhookEvent(endpoint.secret, received?.body ?? '', received?.headers ?? {})).toStrictEqual({
      type: 'newPlant',
      plant: { id: 0n, name: 'Plant Store test event', tag: 'webhook-test' },
    });
    // Sent once, now: nothing enters the outbox.
    expect(receiver.received).toHaveLength(1);
    expect(await listDeliveries(base, endpoint.id)).toStrictEqual([]);
  });

  it('sends the chosen event type in the endpoint’s format, verified by standardwebhooks', async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url, { payloadFormat: 'standard' });

    const result = await testResult(await sendTest(base, endpoint.id, { eventType: 'plantDeleted' }));

    expect(result).toMatchObject({ eventType: 'plantDeleted', delivered: true, status: 200 });
    const [received] = await receiver.waitFor(1);
    const verified = new Webhook(endpoint.secret).verify(received?.body ?? '', received?.headers as never);
    expect(verified).toStrictEqual({
      type: 'plantDeleted',
      timestamp: expect.any(String),
      data: { id: 0, plant: { id: 0, name: 'Plant Store test event', tag: 'webhook-test' } },
    });
  });

  it('signs with the new and the previous secret during a rotation’s grace, secrets sealed at rest', async () => {
    const base = await start({ webhookSecrets: secretBox(randomBytes(32)) });
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url);
    const rotated = await callApi(base, `/webhooks/${endpoint.id}/rotate-secret`, {
      method: 'POST',
      headers: { 'content-type': '' },
    });
    const { secret } = (await rotated.json()) as { secret: string };

    expect(await testResult(await sendTest(base, endpoint.id))).toMatchObject({ delivered: true });

    const [received] = await receiver.waitFor(1);
    expect(String(received?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const key of [secret, endpoint.secret]) {
      expect(verifyPlantWebhookEvent(key, received?.body ?? '', received?.headers ?? {})).toMatchObject({
        type: 'newPlant',
      });
    }
  });

  it('reports a receiver that answers 500 as not delivered, with its status', async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    receiver.answer({ status: 500 });
    const endpoint = await registerEndpoint(base, receiver.url);

    expect(await testResult(await sendTest(base, endpoint.id, {}))).toStrictEqual({
      webhookId: expect.stringMatching(/^msg_test_/),
      eventType: 'newPlant',
      delivered: false,
      status: 500,
      durationMs: expect.any(Number),
      error: 'The receiver answered 500.',
    });
    // A test is never retried.
    expect(receiver.received).toHaveLength(1);
  });

  it('tests a disabled endpoint, which a team checks before enabling it again', async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url);
    const disabled = await callApi(base, `/webhooks/${endpoint.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ enabled: false }),
    });
    expect(disabled.status).toBe(200);

    expect(await testResult(await sendTest(base, endpoint.id))).toMatchObject({ delivered: true, status: 200 });
  });

  it('reports a receiver that never answers as timed out after PLANT_WEBHOOK_TIMEOUT_MS', async () => {
    const tester = createWebhookTester({ timeoutMs: 300, allowPrivate: true });
    defer(async () => tester.close());
    const base = await start({ webhookTester: tester });
    const receiver = await deferredReceiver(defer);
    receiver.answer('hang');
    const endpoint = await registerEndpoint(base, receiver.url);

    const result = await testResult(await sendTest(base, endpoint.id));

    expect(result).toStrictEqual({
      webhookId: expect.stringMatching(/^msg_test_/),
      eventType: 'newPlant',
      delivered: false,
      durationMs: expect.any(Number),
      error: 'No 2xx answer within 300 ms.',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(300);
  });

  it('refuses to send to a host that resolves to a private address when private targets are not allowed', async () => {
    // Public when registered, loopback when tested: the guard judges the address it connects to.
    let addresses: HostAddress[] = [{ address: '93.184.216.34', family: 4 }];
    const resolver = async () => addresses;
    const base = await start({ allowPrivateWebhooks: false, webhookHostResolver: resolver });
    const endpoint = await registerEndpoint(base, 'https://receiver.example/hook');
    addresses = [{ address: '127.0.0.1', family: 4 }];

    const result = await testResult(await sendTest(base, endpoint.id));

    expect(result).toMatchObject({
      delivered: false,
      error: 'Refused to connect: receiver.example resolves to a loopback address.',
    });
    expect(result).not.toHaveProperty('status');
  });

  it('answers 404 with the Error body for an unknown endpoint', async () => {
    const base = await start();
    await expectError(await sendTest(base, 'ep_unknown'), 404, /ep_unknown/);
  });

  it('answers 403 with the Bearer challenge to a token without webhooks:write, and sends nothing', async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url);
    const refused = await callApi(
      base,
      `/webhooks/${endpoint.id}/test`,
      { method: 'POST', body: '{}' },
      SCOPED_TEST_TOKEN,
    );
    expect(refused.headers.get('www-authenticate')).toContain('scope="webhooks:write"');
    await expectError(refused, 403, /webhooks:write/);
    expect(receiver.received).toHaveLength(0);
  });

  it('answers 400 naming the field for an unknown event type or a body that is not an object', async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url);
    await expectError(await sendTest(base, endpoint.id, { eventType: 'plantEaten' }), 400, /eventType/);
    await expectError(await sendTest(base, endpoint.id, ['newPlant']), 400, /JSON object/);
    expect(receiver.received).toHaveLength(0);
  });

  it(`answers 429 with Retry-After beyond ${WEBHOOK_TESTS_PER_MINUTE} tests a minute to one endpoint, others unaffected`, async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url);
    const other = await registerEndpoint(base, `${receiver.url}/other`);
    for (let test = 0; test < WEBHOOK_TESTS_PER_MINUTE; test += 1) {
      expect((await sendTest(base, endpoint.id)).status).toBe(200);
    }

    const refused = await sendTest(base, endpoint.id);

    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectError(refused, 429, new RegExp(`${endpoint.id}.*retry after \\d+ s`));
    expect(receiver.received).toHaveLength(WEBHOOK_TESTS_PER_MINUTE);
    expect((await sendTest(base, other.id)).status).toBe(200);
  });

  it(`keeps a URL's ${WEBHOOK_TESTS_PER_MINUTE} tests a minute across deleting its endpoint and registering it again`, async () => {
    const base = await start();
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(base, receiver.url);
    for (let test = 0; test < WEBHOOK_TESTS_PER_MINUTE; test += 1) {
      expect((await sendTest(base, endpoint.id)).status).toBe(200);
    }
    expect((await callApi(base, `/webhooks/${endpoint.id}`, { method: 'DELETE' })).status).toBe(204);
    const again = await registerEndpoint(base, receiver.url);

    const refused = await sendTest(base, again.id);

    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectError(refused, 429, new RegExp(`${again.id}.*retry after \\d+ s`));
    expect(receiver.received).toHaveLength(WEBHOOK_TESTS_PER_MINUTE);
  });

  it("counts a principal's tests of an endpoint across replicas, the limit a minute in all", async () => {
    const server = await startTestServer(undefined, { allowPrivateWebhooks: true });
    defer(server.cleanup);
    const other = await replica(server.store);
    const receiver = await deferredReceiver(defer);
    const endpoint = await registerEndpoint(server.url, receiver.url);
    for (let test = 0; test < WEBHOOK_TESTS_PER_MINUTE; test += 1) {
      const base = test % 2 === 0 ? server.url : other;
      expect((await sendTest(base, endpoint.id)).status).toBe(200);
    }
    for (const base of [server.url, other]) await expectError(await sendTest(base, endpoint.id), 429, /retry after/);
    expect(receiver.received).toHaveLength(WEBHOOK_TESTS_PER_MINUTE);
  });

  it("answers 429 to a principal with its most tests in flight, while another principal's test goes", async () => {
    const server = await startTestServer(undefined, { allowPrivateWebhooks: true });
    defer(server.cleanup);
    const tester = createWebhookTester({ timeoutMs: 10_000, allowPrivate: true, maxInFlightPerPrincipal: 1 });
    defer(async () => tester.close());
    const base = await replica(server.store, { webhookTester: tester });
    const receiver = await deferredReceiver(defer);
    receiver.answer((_request, index) => (index === 0 ? 'hold' : { status: 200 }));
    const first = await registerEndpoint(base, receiver.url, { token: REPLICA_TOKENS[0] });
    const second = await registerEndpoint(base, `${receiver.url}/second`, { token: REPLICA_TOKENS[0] });
    const others = await registerEndpoint(base, `${receiver.url}/others`, { token: REPLICA_TOKENS[1] });

    const held = callApi(base, `/webhooks/${first.id}/test`, { method: 'POST', body: '{}' }, REPLICA_TOKENS[0]);
    await receiver.waitFor(1);
    const refused = await callApi(
      base,
      `/webhooks/${second.id}/test`,
      { method: 'POST', body: '{}' },
      REPLICA_TOKENS[0],
    );
    expect(refused.headers.get('retry-after')).toBe('10');
    await expectError(refused, 429, /This client has 1 test deliveries in flight/);
    const another = await callApi(
      base,
      `/webhooks/${others.id}/test`,
      { method: 'POST', body: '{}' },
      REPLICA_TOKENS[1],
    );
    expect(await testResult(another)).toMatchObject({ delivered: true });
    receiver.release();
    expect(await testResult(await held)).toMatchObject({ delivered: true });
  });

  it('answers 503 with Retry-After once the process has its most tests in flight, and serves the next after', async () => {
    const tester = createWebhookTester({ timeoutMs: 10_000, allowPrivate: true, maxInFlight: 1 });
    defer(async () => tester.close());
    const base = await start({ webhookTester: tester });
    const receiver = await deferredReceiver(defer);
    receiver.answer((_request, index) => (index === 0 ? 'hold' : { status: 200 }));
    const first = await registerEndpoint(base, receiver.url);
    const second = await registerEndpoint(base, `${receiver.url}/second`);

    const held = sendTest(base, first.id);
    await receiver.waitFor(1);
    const refused = await sendTest(base, second.id);
    expect(refused.headers.get('retry-after')).toBe('10');
    await expectError(refused, 503, /in flight/);
    receiver.release();
    expect(await testResult(await held)).toMatchObject({ delivered: true });
    // Refused for the process's sake, the endpoint's own budget is untouched.
    expect(await testResult(await sendTest(base, second.id))).toMatchObject({ delivered: true });
  });
});
