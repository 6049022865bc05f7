import { WEBHOOK_ENDPOINTS_MAX } from '@org/plant-contract';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deferCleanups, deferredReceiver } from '#test/cleanups';
import { expectError } from '#test/expect-error';
import { postPlant } from '#test/http-request';
import {
  ADMIN_TEST_TOKEN,
  ON_FAKE,
  TEAM_A,
  TEAM_A_NEW_TOKEN,
  TEAM_A_TOKEN,
  TEAM_B,
  TEAM_B_TOKEN,
  TEST_TOKEN,
} from '#test/test-server';
import { until } from '#test/until';
import { callApi, listDeliveries, registerEndpoint, startWebhookService } from '#test/webhook-service';

const defer = deferCleanups();

type Endpoint = { id: string; url: string; secret: string; description?: string; owner?: string };
type Delivery = { id: string; status: string };

const startService = async (endpointsMax?: number) => {
  const service = await startWebhookService(
    { retryDelaysMs: [100, 100] },
    { pollIntervalMs: 50 },
    endpointsMax === undefined ? {} : { webhookEndpointsMax: endpointsMax },
  );
  defer(service.cleanup);
  return service.base;
};

type Answer = { status: number; body: Record<string, unknown> & { message: string } };
const json = async (response: Response): Promise<Answer> => ({
  status: response.status,
  body: (await response.json()) as Answer['body'],
});
const list = async (base: string, token: string) =>
  (await (await callApi(base, '/webhooks', {}, token)).json()) as Endpoint[];

/** What an id that was never registered answers, as the route's own 404. */
const UNKNOWN = 'ep_0123456789abcdef0123456789abcdef';

/** Every route on one endpoint, as a request of `token` on the endpoint `id`. */
const ROUTES: Record<string, (base: string, id: string, token: string) => Promise<Response>> = {
  get: (base, id, token) => callApi(base, `/webhooks/${id}`, {}, token),
  patch: (base, id, token) =>
    callApi(
      base,
      `/webhooks/${id}`,
      { method: 'PATCH', body: JSON.stringify({ url: 'http://127.0.0.1:9/stolen', description: 'Mine now' }) },
      token,
    ),
  delete: (base, id, token) => callApi(base, `/webhooks/${id}`, { method: 'DELETE' }, token),
  'rotate-secret': (base, id, token) => callApi(base, `/webhooks/${id}/rotate-secret`, { method: 'POST' }, token),
  test: (base, id, token) => callApi(base, `/webhooks/${id}/test`, { method: 'POST' }, token),
  recover: (base, id, token) =>
    callApi(
      base,
      `/webhooks/${id}/recover`,
      { method: 'POST', body: JSON.stringify({ since: '2000-01-01T00:00:00Z' }) },
      token,
    ),
  deliveries: (base, id, token) => callApi(base, `/webhooks/${id}/deliveries`, {}, token),
  retry: (base, id, token) =>
    callApi(base, `/webhooks/${id}/deliveries/msg_0123456789abcdef_1/retry`, { method: 'POST' }, token),
};

describe('webhook endpoints belong to the principal that registered them', () => {
  it.each(Object.keys(ROUTES))(
    '%s on another principal’s endpoint answers as for an unknown id, and the owner’s endpoint is untouched and still delivered to',
    async (route) => {
      const base = await startService();
      const receiver = await deferredReceiver(defer);
      const owned = await registerEndpoint<Endpoint>(base, receiver.url, { token: TEAM_A_TOKEN, description: 'A' });
      const call = ROUTES[route] as (typeof ROUTES)[string];

      const foreign = await json(await call(base, owned.id, TEAM_B_TOKEN));
      const unknown = await json(await call(base, UNKNOWN, TEAM_B_TOKEN));
      expect(foreign.status).toBe(404);
      expect(foreign.body).toStrictEqual({
        ...unknown.body,
        message: unknown.body.message.replace(UNKNOWN, owned.id),
      });

      const { body: after } = await json(await callApi(base, `/webhooks/${owned.id}`, {}, TEAM_A_TOKEN));
      const { secret, ...shown } = owned;
      expect(after).toStrictEqual(shown);
      expect((await postPlant(base, TEAM_A_TOKEN, { id: 1n, name: 'Fern' })).status).toBe(200);
      const [delivery] = await until(
        () => listDeliveries<Delivery>(base, owned.id, { token: TEAM_A_TOKEN }),
        (listed) => listed.length === 1,
      );
      expect(delivery?.status).toMatch(/pending|delivered/);
      if (ON_FAKE) return;
      // Signed with the secret answered at registration: no rotation by another principal took hold.
      const [received] = await receiver.waitFor(1);
      expect(() =>
        new Webhook(secret).verify(received?.body ?? '', received?.headers as Record<string, string>),
      ).not.toThrow();
    },
  );

  it('lists each principal’s own; an administrator (webhooks:admin or the operator) sees all, with their owners', async () => {
    const base = await startService();
    const a = await registerEndpoint<Endpoint>(base, 'http://127.0.0.1:9/a', { token: TEAM_A_TOKEN });
    const b = await registerEndpoint<Endpoint>(base, 'http://127.0.0.1:9/b', { token: TEAM_B_TOKEN });
    expect(a).not.toHaveProperty('owner');
    expect((await list(base, TEAM_A_TOKEN)).map((endpoint) => endpoint.id)).toStrictEqual([a.id]);
    expect((await list(base, TEAM_B_TOKEN)).map((endpoint) => [endpoint.id, endpoint.owner])).toStrictEqual([
      [b.id, undefined],
    ]);
    for (const token of [ADMIN_TEST_TOKEN, TEST_TOKEN]) {
      expect((await list(base, token)).map((endpoint) => [endpoint.id, endpoint.owner])).toStrictEqual([
        [a.id, TEAM_A],
        [b.id, TEAM_B],
      ]);
    }
    // The administrator manages another principal's endpoint, which keeps its owner.
    const patched = await json(
      await callApi(
        base,
        `/webhooks/${a.id}`,
        { method: 'PATCH', body: JSON.stringify({ description: 'Seen by the admin' }) },
        ADMIN_TEST_TOKEN,
      ),
    );
    expect(patched).toMatchObject({ status: 200, body: { id: a.id, description: 'Seen by the admin', owner: TEAM_A } });
    expect((await json(await callApi(base, `/webhooks/${a.id}`, {}, TEAM_A_TOKEN))).body).toMatchObject({
      description: 'Seen by the admin',
    });
  });

  it('lets two principals register one receiver URL, once each', async () => {
    const base = await startService();
    const url = 'http://127.0.0.1:9/shared';
    const a = await registerEndpoint<Endpoint>(base, url, { token: TEAM_A_TOKEN });
    await registerEndpoint<Endpoint>(base, url, { token: TEAM_B_TOKEN });
    const again = await callApi(base, '/webhooks', { method: 'POST', body: JSON.stringify({ url }) }, TEAM_A_TOKEN);
    await expectError(again, 409, new RegExp(`already registered by webhook endpoint ${a.id}`));
  });

  it('keeps a principal’s endpoints across a rotation of its token: the old and the new one see and manage them', async () => {
    const base = await startService();
    const a = await registerEndpoint<Endpoint>(base, 'http://127.0.0.1:9/a', { token: TEAM_A_TOKEN });
    const listed = await list(base, TEAM_A_NEW_TOKEN);
    expect(listed.map((endpoint) => endpoint.id)).toStrictEqual([a.id]);
    const deleted = await callApi(base, `/webhooks/${a.id}`, { method: 'DELETE' }, TEAM_A_NEW_TOKEN);
    expect(deleted.status).toBe(204);
  });

  it(`caps each principal at ${WEBHOOK_ENDPOINTS_MAX} endpoints, leaving the others theirs`, async () => {
    const base = await startService();
    for (let index = 0; index < WEBHOOK_ENDPOINTS_MAX; index++) {
      await registerEndpoint(base, `http://127.0.0.1:9/a/${index}`, { token: TEAM_A_TOKEN });
    }
    const post = (token: string, url: string) =>
      callApi(base, '/webhooks', { method: 'POST', body: JSON.stringify({ url }) }, token);
    await expectError(
      await post(TEAM_A_TOKEN, 'http://127.0.0.1:9/a/extra'),
      409,
      new RegExp(
        `^At most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints may be registered by one principal; delete one first\\.$`,
      ),
    );
    expect((await post(TEAM_B_TOKEN, 'http://127.0.0.1:9/b')).status).toBe(201);
  });

  it('caps the endpoints of all principals together at PLANT_WEBHOOK_ENDPOINTS_MAX', async () => {
    const base = await startService(2);
    await registerEndpoint(base, 'http://127.0.0.1:9/a', { token: TEAM_A_TOKEN });
    await registerEndpoint(base, 'http://127.0.0.1:9/b', { token: TEAM_B_TOKEN });
    const refused = await callApi(
      base,
      '/webhooks',
      { method: 'POST', body: JSON.stringify({ url: 'http://127.0.0.1:9/c' }) },
      TEST_TOKEN,
    );
    await expectError(
      refused,
      409,
      /^The service holds its most webhook endpoints of all principals \(2\); ask its operator\.$/,
    );
  });
});
