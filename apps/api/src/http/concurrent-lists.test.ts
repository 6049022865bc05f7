import { describe, expect, it } from 'vitest';
import { deferCleanups } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { startTestServer, TEST_TOKEN } from '#test/test-server';
import { callApi, registerEndpoint } from '#test/webhook-service';

const defer = deferCleanups();

/** As a dashboard loading its views at once: requests of one client in parallel. */
const PARALLEL = 8;

describe('lists of one client in parallel on an idle service', () => {
  it('answers 8 lists of endpoints, of deliveries and of default pages of plants at once, none refused', async () => {
    const server = await startTestServer(undefined, { allowPrivateWebhooks: true });
    defer(server.cleanup);
    const endpoint = await registerEndpoint(server.url, 'http://127.0.0.1:9/hook');
    for (let id = 1n; id <= 20n; id += 1n) {
      expect((await postPlant(server.url, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);
    }
    const paths = ['/webhooks', `/webhooks/${endpoint.id}/deliveries?limit=1000`, '/plants'];
    const answers = await Promise.all(
      paths.flatMap((path) => Array.from({ length: PARALLEL }, () => callApi(server.url, path))),
    );
    const statuses = await Promise.all(answers.map(async (answer) => `${answer.status} ${await answer.text()}`));
    expect(statuses.filter((status) => !status.startsWith('200 '))).toStrictEqual([]);
  });
});
