import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { httpRequest } from '#test/http-request';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import { startWebhookReceiver } from '#test/webhook-receiver';
import { registerEndpoint } from '#test/webhook-service';

/**
 * What the body reader answers before a route sees the body: media type, charset, presence and
 * encoding. One server for the file: none of these requests stores anything.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.cleanup();
});

let nextId = 1;
const plant = () => JSON.stringify({ id: nextId++, name: 'Fern' });

const post = (body: RequestInit['body'], headers: Record<string, string>) =>
  fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, ...headers },
    ...(body === undefined ? {} : { body, duplex: 'half' }),
  });

describe('Content-Type', () => {
  it.each([
    'application/json',
    'APPLICATION/JSON',
    'application/json; charset=utf-8',
    'application/json;charset="UTF-8"',
    'application/json; Charset=Utf-8',
    'application/json; boundary=irrelevant',
    'application/vnd.plant+json',
    'application/merge-patch+json; charset=utf-8',
    'application/json ; charset = utf-8',
  ])('accepts %s', async (contentType) => {
    expect((await post(plant(), { 'content-type': contentType })).status).toBe(200);
  });

  // What a refused Content-Type is told: the media type it must have, or the charset.
  const mustBe = (contentType: string) =>
    /charset/i.test(contentType)
      ? 'JSON bodies must be encoded as UTF-8.'
      : `Content-Type must be application/json (got ${JSON.stringify(contentType)}).`;
  it.each([
    'text/plain',
    'application/+json',
    'application/json-seq',
    'xapplication/vnd.plant+json',
    'application/vnd.plant+jsonx',
    'multipart/form-data; boundary=x',
    'application/json; charset=iso-8859-1',
    'application/json; CHARSET=latin1',
    'application/json; charset="utf-16"',
    // Only a pair of surrounding quotes is taken off the value, not quotes within it.
    'application/json; charset=utf"-8',
    'application/json; charset=u"tf-8"',
  ])('answers %s with 415 saying what it must be', async (contentType) => {
    const message = await expectError(await post(plant(), { 'content-type': contentType }), 415);
    expect(message).toBe(mustBe(contentType));
  });

  it('quotes at most 100 characters of the type sent', async () => {
    const contentType = `text/${'x'.repeat(200)}`;
    const message = await expectError(await post(plant(), { 'content-type': contentType }), 415);
    expect(message).toBe(`Content-Type must be application/json (got ${JSON.stringify(contentType.slice(0, 100))}).`);
  });

  it('answers a body without Content-Type with 415 saying none was sent', async () => {
    const message = await expectError(await post(new Blob([plant()]), {}), 415);
    expect(message).toBe('Content-Type must be application/json (got none).');
  });
});

describe('the body', () => {
  it('answers a request without a body with 400 saying one is required', async () => {
    const message = await expectError(await post(undefined, { 'content-type': 'application/json' }), 400);
    expect(message).toBe('A JSON request body is required.');
  });

  // Presence is judged before the media type: a missing body is the first thing to fix.
  it('answers a request without a body with 400 whatever its Content-Type', async () => {
    const message = await expectError(await post(undefined, { 'content-type': 'text/plain' }), 400);
    expect(message).toBe('A JSON request body is required.');
  });

  it('reads a chunked body, which has no Content-Length', async () => {
    const body = new ReadableStream({
      start: (controller) => {
        controller.enqueue(new TextEncoder().encode(plant()));
        controller.close();
      },
    });
    expect((await post(body, { 'content-type': 'application/json' })).status).toBe(200);
  });

  // fetch sends an empty stream with Content-Length: 0; node:http sends it chunked when told to.
  it('answers an empty chunked body with 400 saying one is required', async () => {
    const answer = await httpRequest(`${server.url}/plants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TEST_TOKEN}`,
        'content-type': 'application/json',
        'transfer-encoding': 'chunked',
      },
      body: '',
    });
    expect(answer.status).toBe(400);
    expect(answer.json()).toStrictEqual({ error: 400, message: 'A JSON request body is required.' });
  });

  it('parses any top-level JSON value, so that the schema names what was expected', async () => {
    const message = await expectError(await post('"Fern"', { 'content-type': 'application/json' }), 400);
    expect(message).toMatch(/^Invalid request body: the top-level value /);
  });

  it('answers a chunked body that turns out empty with 400 saying one is required', async () => {
    const body = new ReadableStream({ start: (controller) => controller.close() });
    const message = await expectError(await post(body, { 'content-type': 'application/json' }), 400);
    expect(message).toBe('A JSON request body is required.');
  });

  it('answers bytes that are not UTF-8 with 400 naming UTF-8', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"id":1,"name":"'), 0xff, 0xfe, 0x22, 0x7d]);
    const message = await expectError(await post(bytes, { 'content-type': 'application/json' }), 400);
    expect(message).toBe('The request body is not valid UTF-8.');
  });
});

describe('a body that is whitespace alone', () => {
  it('answers 400 saying one is required, as for an empty one', async () => {
    const message = await expectError(await post(' \n\t ', { 'content-type': 'application/json' }), 400);
    expect(message).toBe('A JSON request body is required.');
  });
});

describe('a route whose body may be left out (POST /webhooks/{id}/test)', () => {
  let hooks: TestServer;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let id: string;
  beforeAll(async () => {
    hooks = await startTestServer(undefined, { allowPrivateWebhooks: true });
    receiver = await startWebhookReceiver();
    ({ id } = await registerEndpoint(hooks.url, receiver.url));
  });
  afterAll(async () => {
    await receiver?.close();
    await hooks?.cleanup();
  });

  const test = (init: RequestInit = {}) =>
    fetch(`${hooks.url}/webhooks/${id}/test`, {
      method: 'POST',
      ...init,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, ...(init.headers as Record<string, string>) },
    });

  it('passes a request without a body', async () => {
    expect((await test()).status).toBe(200);
  });

  it('reads a body that is sent, refusing one that is not JSON', async () => {
    const message = await expectError(
      await test({ body: '{"eventType":', headers: { 'content-type': 'application/json' } }),
      400,
    );
    expect(message).toMatch(/^The request body is not valid JSON/);
  });
});
