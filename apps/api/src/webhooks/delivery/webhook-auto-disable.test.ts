import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import { until } from '#test/until';
import { callApi, listDeliveries, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();
const receiver = () => deferredReceiver(defer);

type Endpoint = { id: string; enabled: boolean; disabledReason?: string };

const endpoint = async (base: string, id: string): Promise<Endpoint> =>
  (await (await callApi(base, `/webhooks/${id}`)).json()) as Endpoint;

describe('webhook endpoints disabled by their receivers', () => {
  it('disables an endpoint whose every delivery failed for PLANT_WEBHOOK_DISABLE_AFTER_MS, and says why', async () => {
    const service = await startWebhookService({ disableAfterMs: 800, retryDelaysMs: Array(20).fill(100) });
    defer(service.cleanup);
    const failing = await receiver();
    failing.answer({ status: 503 });
    const healthy = await receiver();
    const broken = await registerEndpoint(service.base, failing.url);
    const fine = await registerEndpoint(service.base, healthy.url);
    const started = Date.now();
    expect((await postPlant(service.base, TEST_TOKEN, { id: 1n, name: 'Fern' })).status).toBe(200);

    const disabled = await until(
      () => endpoint(service.base, broken.id),
      (answer) => !answer.enabled,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'Every delivery failed for 800 ms.' });
    // Nothing more is attempted: not the retries of the pending delivery, nor new plants. Once the
    // delivery is not leased (a lease moves its next attempt 32 s on), no attempt is on its way.
    await until(
      () => listDeliveries<{ nextAttemptAt?: string }>(service.base, broken.id),
      ([delivery]) => Date.parse(delivery?.nextAttemptAt ?? '') < Date.now() + 10_000,
    );
    const attempts = failing.received.length;
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect((await postPlant(service.base, TEST_TOKEN, { id: 2n, name: 'Ivy' })).status).toBe(200);
    await healthy.waitFor(2);
    // Were it still enabled, a few retries would go out meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(failing.received).toHaveLength(attempts);
    const stillFine = await endpoint(service.base, fine.id);
    expect(stillFine.enabled).toBe(true);
    expect(stillFine).not.toHaveProperty('disabledReason');
  });

  it('says why an endpoint that answered 410 Gone is disabled', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const gone = await receiver();
    gone.answer({ status: 410 });
    const registered = await registerEndpoint(service.base, gone.url);
    expect((await postPlant(service.base, TEST_TOKEN, { id: 1n, name: 'Fern' })).status).toBe(200);
    expect(
      await until(
        () => endpoint(service.base, registered.id),
        (answer) => !answer.enabled,
      ),
    ).toMatchObject({ enabled: false, disabledReason: 'The receiver answered 410 Gone.' });
    const listed = (await (await callApi(service.base, '/webhooks')).json()) as Endpoint[];
    expect(listed).toMatchObject([
      { id: registered.id, enabled: false, disabledReason: 'The receiver answered 410 Gone.' },
    ]);
  });
});
