import { describe, expect, it, vi } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { TEST_TOKEN } from '#test/test-server';
import { registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

const HOUR_MS = 3_600_000;

/** The id of the plant a delivery announces (its body is the plant). */
const announcedPlant = (body: string): unknown => (JSON.parse(body) as { id: number }).id;

/**
 * Registers the receiver while this process's clock is `skewMs` off: the embedded store's delivery
 * loop shares this process's clock, so it is skewed for the registration alone.
 */
const registerSkewed = async (base: string, url: string, skewMs: number) => {
  vi.setSystemTime(Date.now() + skewMs);
  try {
    return await registerEndpoint(base, url);
  } finally {
    vi.useRealTimers();
  }
};

/**
 * An endpoint receives the plants created since it was registered. The service's own clock (Date
 * in this process) is skewed against the one that stamps announcements (PostgreSQL's now(), the
 * embedded store's database thread), as a replica's clock may be: registration must not go by it.
 */
describe('webhook registration time', () => {
  it('is the store’s: a service clock an hour ahead still delivers the first plant created after registration', async () => {
    const service = await startWebhookService();
    defer(service.cleanup);
    const receiver = await deferredReceiver(defer);
    await registerSkewed(service.base, receiver.url, HOUR_MS);
    expect((await postPlant(service.base, TEST_TOKEN, { id: 1n, name: 'First' })).status).toBe(200);
    const [delivery] = await receiver.waitFor(1);
    expect(announcedPlant(delivery?.body as string)).toBe(1);
  });
});
