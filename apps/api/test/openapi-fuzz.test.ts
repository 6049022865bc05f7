import { describe, expect, it } from 'vitest';
import { deferCleanups } from '#test/cleanups';
import { postPlant } from '#test/http-request';
import { conformingFetch, requestProblems } from '#test/openapi-conformance';
import { fuzzRequests, sendConcurrently } from '#test/openapi-fuzz';
import { startTestServer, TEST_TOKEN } from '#test/test-server';
import { registerEndpoint } from '#test/webhook-service';

const defer = deferCleanups();

/** As a client that runs its calls 8 at a time (a dashboard, a sync job). */
const CONCURRENCY = 8;

describe('an OpenAPI-driven fuzz, 8 requests at once from one token', () => {
  it('answers every operation as the document says, never with a 5xx, on an idle service', async () => {
    const server = await startTestServer(undefined, { allowPrivateWebhooks: true });
    defer(server.cleanup);
    const endpoints = [];
    for (const path of ['a', 'b', 'c'])
      endpoints.push((await registerEndpoint(server.url, `http://127.0.0.1:9/${path}`)).id);
    const plants = [1n, 2n, 9007199254740993n];
    for (const id of plants)
      expect((await postPlant(server.url, TEST_TOKEN, { id, name: `Plant ${id}` })).status).toBe(200);

    const requests = fuzzRequests({ seed: 45, count: 560, known: { endpoints, plants } });
    const answers = await sendConcurrently(
      requests,
      CONCURRENCY,
      async ({ operation, method, path, headers, body }) => {
        const response = await conformingFetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${TEST_TOKEN}`, ...headers },
          ...(body !== undefined && { body }),
        });
        return { operation, status: response.status, text: await response.text() };
      },
    );

    expect(answers.filter(({ status }) => status >= 500)).toStrictEqual([]);
    // The document is the whole truth: what it allows is never refused as malformed.
    const refusedButAllowed = requests.flatMap((request, index) =>
      answers[index]?.status === 400 && requestProblems(request).length === 0
        ? [`${request.method} ${request.path} ${request.body ?? ''} → ${answers[index]?.text}`]
        : [],
    );
    expect(refusedButAllowed).toStrictEqual([]);
    // Every operation was asked, and most of them accepted some of what they were sent.
    const accepted = new Set(answers.filter(({ status }) => status < 300).map(({ operation }) => operation));
    expect(new Set(answers.map(({ operation }) => operation)).size).toBe(14);
    expect(accepted.size).toBeGreaterThanOrEqual(10);
  });
});
