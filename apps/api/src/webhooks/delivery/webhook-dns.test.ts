import { pbkdf2 } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { expectError } from '#test/expect-error';
import { postPlant } from '#test/http-request';
import { startSilentNameServer } from '#test/silent-name-server';
import { makeDataDir, startTestServer, TEST_TOKEN } from '#test/test-server';
import { until } from '#test/until';
import { callApi, listDeliveries, registerEndpoint, startWebhookService } from '#test/webhook-service';
import { createHostResolver } from '../targets/host-resolver.ts';

const defer = deferCleanups();

/** A resolver whose only name server reads every query and never answers. */
const silentResolver = async (timeoutMs: number) => {
  const server = await startSilentNameServer();
  defer(server.close);
  return { server, resolver: createHostResolver({ timeoutMs, servers: [server.address], hosts: new Map() }) };
};

describe('webhook hosts whose name server never answers', () => {
  it('answers 503 with Retry-After to a registration once the lookup times out, saying why', async () => {
    const { server, resolver } = await silentResolver(300);
    const service = await startTestServer(makeDataDir(), { webhookHostResolver: resolver });
    defer(service.cleanup);
    const answer = await callApi(service.url, '/webhooks', {
      method: 'POST',
      body: JSON.stringify({ url: 'https://hang.example.test/hook' }),
    });
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(await expectError(answer, 503)).toBe(
      'The name server did not answer for url host hang.example.test in time; retry later.',
    );
    expect(server.queries).toBeGreaterThan(0);
  });

  it('fails its deliveries with the reason while other receivers, and the thread pool, carry on', async () => {
    const { server, resolver } = await silentResolver(1_000);
    const service = await startWebhookService({ timeoutMs: 5_000, retryDelaysMs: [60_000] }, { resolver });
    defer(service.cleanup);
    const hanging = await registerEndpoint(service.base, 'http://hang.example.test:9/hook');
    const healthy = await deferredReceiver(defer);
    await registerEndpoint(service.base, healthy.url);

    expect((await postPlant(service.base, TEST_TOKEN, { id: 1n, name: 'Fern' })).status).toBe(200);
    await until(
      async () => server.queries,
      (queries) => queries > 0,
    );
    // While the lookup waits: the healthy receiver is served, and work on the thread pool runs.
    await healthy.waitFor(1, 5_000);
    await promisify(pbkdf2)('secret', 'salt', 1_000, 32, 'sha256');
    const [pending] = await listDeliveries<{ attempts: number }>(service.base, hanging.id);
    expect(pending?.attempts).toBe(0);

    const [failed] = await until(
      () => listDeliveries<{ attempts: number; lastError?: string }>(service.base, hanging.id),
      ([delivery]) => delivery?.attempts === 1,
    );
    expect(failed?.lastError).toBe(
      'Name lookup failed: hang.example.test: no answer from the name server within 1000 ms.',
    );
  });
});
