import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgents, postWebhook } from './post-webhook.ts';

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** A loopback server that answers 204 and resolves each request it got, with its body. */
const receiver = async () => {
  const requests: { request: IncomingMessage; body: string }[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      requests.push({ request, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { port: (server.address() as AddressInfo).port, requests };
};

describe('postWebhook', () => {
  it('sends to the URL as given: its path, query and credentials, with the signed headers', async () => {
    const { port, requests } = await receiver();
    const agents = createAgents({ allowPrivate: true, maxSockets: 1 });
    const outcome = await postWebhook(
      `http://hook%20user:p%40ss@127.0.0.1:${port}/hooks/plants?token=a%2Fb&v=2`,
      '{"id":1,"name":"Monstera"}',
      { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': 'v1,abc' },
      { timeoutMs: 5_000, allowPrivate: true, agents },
    );
    agents.http.destroy();
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
    const agents = createAgents({ allowPrivate: true, maxSockets: 1 });
    await postWebhook(`http://127.0.0.1:${port}/`, '{}', {}, { timeoutMs: 5_000, allowPrivate: true, agents });
    agents.http.destroy();
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
});
