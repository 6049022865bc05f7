import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HostResolver } from '../targets/host-resolver.ts';
import { createAgents, postWebhook, RESPONSE_BYTES_LIMIT } from './post-webhook.ts';

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/**
 * A loopback server that answers each request with `answer` (by default 204) once it read it, and
 * keeps each request it got, with its body, and the port each came from (one per connection).
 */
const receiver = async (
  answer: (response: ServerResponse) => void = (response) => {
    response.writeHead(204).end();
  },
) => {
  const requests: { request: IncomingMessage; body: string; from: number | undefined }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      requests.push({ request, body, from: request.socket.remotePort });
      answer(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => server.close().closeAllConnections() });
  return { port: (server.address() as AddressInfo).port, requests };
};

/** POSTs once, private targets allowed, through agents of its own that are closed after. */
const postOnce = async (url: string, body = '{}', headers: Record<string, string> = {}) => {
  const agents = createAgents({ allowPrivate: true, maxSockets: 1 });
  try {
    return await postWebhook(url, body, headers, { timeoutMs: 5_000, allowPrivate: true, agents });
  } finally {
    agents.http.destroy();
  }
};

describe('postWebhook', () => {
  it('sends to the URL as given: its path, query and credentials, with the signed headers', async () => {
    const { port, requests } = await receiver();
    const outcome = await postOnce(
      `http://hook%20user:p%40ss@127.0.0.1:${port}/hooks/plants?token=a%2Fb&v=2`,
      '{"id":1,"name":"Monstera"}',
      { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abc' },
    );
    expect(outcome).toEqual({ status: 204 });
    expect(requests).toHaveLength(1);
    const [{ request, body }] = requests as [(typeof requests)[number]];
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/hooks/plants?token=a%2Fb&v=2');
    expect(request.headers).toMatchObject({
      host: `127.0.0.1:${port}`,
      authorization: `Basic ${Buffer.from('hook user:p@ss').toString('base64')}`,
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': 'plant-store-webhooks/1',
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': 'v1,abc',
    });
    expect(body).toBe('{"id":1,"name":"Monstera"}');
  });

  it('sends no authorization header when the URL has no credentials', async () => {
    const { port, requests } = await receiver();
    await postOnce(`http://127.0.0.1:${port}/`);
    expect(requests[0]?.request.url).toBe('/');
    expect(requests[0]?.request.headers.authorization).toBeUndefined();
  });

  it('judges a URL read before by the policy of each call', async () => {
    const { port, requests } = await receiver();
    const agents = createAgents({ allowPrivate: true, maxSockets: 1 });
    const url = `http://127.0.0.1:${port}/judged`;
    const refused = await postWebhook(url, '{}', {}, { timeoutMs: 5_000, allowPrivate: false, agents });
    const sent = await postWebhook(url, '{}', {}, { timeoutMs: 5_000, allowPrivate: true, agents });
    agents.http.destroy();
    expect(refused).toStrictEqual({ error: 'Refused to connect: http: URLs are not allowed.', refused: true });
    expect(sent).toStrictEqual({ status: 204 });
    expect(requests.map(({ request }) => request.url)).toStrictEqual(['/judged']);
  });

  it('refuses a URL that does not parse, each time', async () => {
    const agents = createAgents({ allowPrivate: true, maxSockets: 1 });
    const options = { timeoutMs: 5_000, allowPrivate: true, agents };
    const invalid = { error: 'The endpoint URL is not valid.', refused: true };
    expect(await postWebhook('http://', '{}', {}, options)).toStrictEqual(invalid);
    expect(await postWebhook('http://', '{}', {}, options)).toStrictEqual(invalid);
  });

  it('counts an answer by its status: redirects are not followed, Retry-After is read', async () => {
    const { port, requests } = await receiver((response) =>
      response.writeHead(307, { location: '/elsewhere', 'retry-after': '7' }).end(),
    );
    const outcome = await postOnce(`http://127.0.0.1:${port}/`);
    expect(outcome).toStrictEqual({ status: 307, retryAfterMs: 7_000 });
    expect(requests.map(({ request }) => request.url)).toStrictEqual(['/']);
  });

  it('keeps the connection of an answer it read, and drops the one of an answer longer than it reads', async () => {
    let length = 10;
    const { port, requests } = await receiver((response) => response.writeHead(200).end('x'.repeat(length)));
    const agents = createAgents({ allowPrivate: true, maxSockets: 1 });
    const options = { timeoutMs: 5_000, allowPrivate: true, agents };
    const url = `http://127.0.0.1:${port}/`;
    expect(await postWebhook(url, '{}', {}, options)).toStrictEqual({ status: 200 });
    expect(await postWebhook(url, '{}', {}, options)).toStrictEqual({ status: 200 });
    length = 64 * RESPONSE_BYTES_LIMIT;
    expect(await postWebhook(url, '{}', {}, options)).toStrictEqual({ status: 200 });
    length = 10;
    expect(await postWebhook(url, '{}', {}, options)).toStrictEqual({ status: 200 });
    agents.http.destroy();
    const [first, second, long, after] = requests.map(({ from }) => from);
    expect(second).toBe(first);
    expect(long).toBe(first);
    expect(after).not.toBe(first);
  });

  it('says the connection was reset when the receiver closes it without answering', async () => {
    const { port } = await receiver((response) => {
      response.socket?.destroy();
    });
    const outcome = await postOnce(`http://127.0.0.1:${port}/`);
    expect(outcome).toStrictEqual({ error: 'Connection failed: ECONNRESET.' });
  });

  it('times the exchange out while its connection is still being made, and after it was sent', async () => {
    const { port, requests } = await receiver(() => {});
    const options = (resolver: HostResolver) => {
      const agents = createAgents({ allowPrivate: true, maxSockets: 1, resolver });
      return { timeoutMs: 200, allowPrivate: true, agents };
    };
    const lookingUp = options(() => new Promise(() => {}));
    const hanging = options(async () => [{ address: '127.0.0.1', family: 4 }]);
    const timedOut = { error: 'No 2xx answer within 200 ms.' };
    const started = performance.now();
    const outcomes = await Promise.all([
      postWebhook(`http://receiver.test:${port}/`, '{}', {}, lookingUp),
      postWebhook(`http://receiver.test:${port}/`, '{}', {}, hanging),
    ]);
    const elapsed = performance.now() - started;
    lookingUp.agents.http.destroy();
    hanging.agents.http.destroy();
    expect(outcomes).toStrictEqual([timedOut, timedOut]);
    expect(requests).toHaveLength(1);
    expect(elapsed).toBeLessThan(5_000);
  });
});
