import { parseExactJson } from '@org/plant-contract';
import { pino } from 'pino';
import type { Clock } from '../../src/clock.ts';
import type { WebhookConfig } from '../../src/config.ts';
import { CONFIG_DEFAULTS } from '../../src/config-defaults.ts';
import { startWebhookDelivery, type WebhookDeliveryOptions } from '../../src/webhooks/delivery/delivery-loop.ts';
import { sendFakeDeliveries } from './fake-deliveries.ts';
import { makeDataDir, startTestServer, TEST_TOKEN, type TestAppOptions, type TestServer } from './test-server.ts';

export type WebhookService = {
  base: string;
  server: TestServer;
  /** Stops the delivery loop, then the server; the data directory stays (to look at its files). */
  stop(): Promise<void>;
  /** stop(), then the data directory is deleted. */
  cleanup(): Promise<void>;
};

/**
 * The real app and delivery loop on a SQLite store in a temporary directory, on
 * 127.0.0.1:<ephemeral>, receivers allowed on loopback. The loop never steps back for requests
 * unless told: a busy test machine must not slow the tests. In the `api-fake` project, the fake, whose
 * recorded deliveries go out through `sendFakeDeliveries`. `app` adds options of the app (a
 * secret box, a rotation grace, the store's clock); a secret box is given to the loop too.
 */
export const startWebhookService = async (
  config: Partial<WebhookConfig> = {},
  options: Partial<Omit<WebhookDeliveryOptions, 'store' | 'config' | 'logger'>> = {},
  app: TestAppOptions & { storeClock?: Clock } = {},
): Promise<WebhookService> => {
  const server = await startTestServer(makeDataDir(), { allowPrivateWebhooks: true, ...app });
  // The client's fake records deliveries and sends none: they go as a receiver team would send them
  // (without retries, rate limits or a delivery loop's other work: those suites are on FAKE_DOES_NOT_MODEL).
  if (server.fake !== undefined) {
    const stopSending = sendFakeDeliveries(server.fake);
    const stop = () => stopSending().then(() => server.stop());
    return { base: server.url, server, stop, cleanup: () => stop().then(() => server.cleanup()) };
  }
  const delivery = startWebhookDelivery({
    store: server.store,
    config: {
      ...CONFIG_DEFAULTS.webhooks,
      timeoutMs: 2_000,
      retryDelaysMs: [300, 300, 300],
      allowPrivate: true,
      ...config,
    },
    logger: pino({ enabled: false }),
    pollIntervalMs: 1_000,
    stopGraceMs: 500,
    random: () => 0.5,
    ...(app.webhookSecrets !== undefined && { secrets: app.webhookSecrets }),
    ...options,
  });
  let stopped: Promise<void> | undefined;
  // Attempts in flight are recorded before the store closes.
  const stop = () => (stopped ??= delivery.stop().then(() => server.stop()));
  return { base: server.url, server, stop, cleanup: () => stop().then(() => server.cleanup()) };
};

/** A request to the service with a token (the test token by default), JSON by default. */
export const callApi = (base: string, path: string, init: RequestInit = {}, token = TEST_TOKEN): Promise<Response> =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers },
  });

/**
 * Registers a receiver; resolves with the endpoint as answered (201, with its secret), typed as the
 * caller reads it.
 */
export const registerEndpoint = async <Endpoint = { id: string; secret: string }>(
  base: string,
  url: string,
  {
    description,
    token,
    ...fields
  }: {
    description?: string | undefined;
    token?: string;
    eventTypes?: string[];
    payloadFormat?: string;
    rateLimit?: number;
  } = {},
): Promise<Endpoint> => {
  const response = await callApi(
    base,
    '/webhooks',
    { method: 'POST', body: JSON.stringify({ url, description, ...fields }) },
    token,
  );
  if (response.status !== 201)
    throw new Error(`Registering ${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as Endpoint;
};

/** An endpoint's deliveries, newest first (the first page: `limit` or the route's default), ids exact. */
export const listDeliveries = async <Delivery>(
  base: string,
  endpointId: string,
  { limit, token }: { limit?: number; token?: string } = {},
): Promise<Delivery[]> => {
  const query = limit === undefined ? '' : `?limit=${limit}`;
  const response = await callApi(base, `/webhooks/${endpointId}/deliveries${query}`, {}, token);
  if (response.status !== 200)
    throw new Error(`Listing the deliveries of ${endpointId} answered ${response.status}: ${await response.text()}`);
  return parseExactJson(await response.text()) as Delivery[];
};
