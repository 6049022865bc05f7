import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { createPlantClient, PlantApiError, PlantClientError } from '@org/plant-client';
import { INT64_MAX, INT64_MIN, NAME_MAX_LENGTH, TAG_MAX_LENGTH } from '@org/plant-contract';
import { afterEach, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { fakeStore } from '#test/fake-store';
import { conformingFetch as fetch } from '#test/openapi-conformance';
import { serverPerTest } from '#test/server-per-test';
import { startTestServer, TEST_TOKEN } from '#test/test-server';
import { createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { BODY_LIMIT_BYTES } from '../http/json-body.ts';
import { type PlantStore, StoreUnavailableError } from '../store/plant-store.ts';

const server = serverPerTest();

const client = () => createPlantClient({ baseUrl: server.url, token: TEST_TOKEN, fetch });

type SendOptions = {
  body?: string | Uint8Array<ArrayBuffer> | Blob;
  method?: string;
  path?: string;
  /** `null` sends no Content-Type at all. */
  contentType?: string | null;
  headers?: Record<string, string>;
};

/** A request the client cannot produce: raw bytes, any method, path or header. */
const send = ({
  body,
  method = 'POST',
  path = '/plants',
  contentType = 'application/json',
  headers = {},
}: SendOptions) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TEST_TOKEN}`,
      ...(contentType === null ? {} : { 'content-type': contentType }),
      ...headers,
    },
    ...(body === undefined ? {} : { body }),
  });

const expectOkPlant = async (response: Response, plant: Record<string, string>) => {
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  expect(await response.json()).toStrictEqual(plant);
};

const expectNothingStored = async (...ids: bigint[]) => {
  for (const id of ids) expect(await server.store.get(id)).toBeUndefined();
};

describe('POST /plants with a valid body', () => {
  it('answers 200 with exactly { name, tag } and stores the plant durably', async () => {
    const response = await send({ body: '{"id":1,"name":"Monstera","tag":"aroid"}' });
    await expectOkPlant(response, { name: 'Monstera', tag: 'aroid' });
    expect(await server.store.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera', tag: 'aroid' });

    // Durable: a new process on the same data directory still has it.
    await server.stop();
    const restarted = await startTestServer(server.dataDir);
    try {
      expect(await restarted.store.get(1n)).toStrictEqual({ id: 1n, name: 'Monstera', tag: 'aroid' });
    } finally {
      await restarted.stop();
    }
  });

  it('leaves the tag key out of the answer and the store when none was sent', async () => {
    const response = await send({ body: '{"id":2,"name":"Fern"}' });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(JSON.parse(text)).toStrictEqual({ name: 'Fern' });
    expect(text).not.toContain('tag');
    expect(await server.store.get(2n)).toStrictEqual({ id: 2n, name: 'Fern' });
  });

  it('resolves through the client with the plant as answered', async () => {
    await expect(client().createPlant({ id: 3, name: 'Pilea', tag: 'urticaceae' })).resolves.toStrictEqual({
      name: 'Pilea',
      tag: 'urticaceae',
    });
    await expect(client().createPlant({ id: 4, name: 'Aloe' })).resolves.toStrictEqual({ name: 'Aloe' });
    expect(await server.store.get(3n)).toStrictEqual({ id: 3n, name: 'Pilea', tag: 'urticaceae' });
    expect(await server.store.get(4n)).toStrictEqual({ id: 4n, name: 'Aloe' });
  });

  it('answers a replay of the same plant 200 again and changes nothing', async () => {
    const plant = { id: 5, name: 'Calathea', tag: 'prayer' };
    await expect(client().createPlant(plant)).resolves.toStrictEqual({ name: 'Calathea', tag: 'prayer' });
    await expect(client().createPlant(plant)).resolves.toStrictEqual({ name: 'Calathea', tag: 'prayer' });
    await expectOkPlant(await send({ body: JSON.stringify(plant) }), { name: 'Calathea', tag: 'prayer' });
    expect(await server.store.get(5n)).toStrictEqual({ id: 5n, name: 'Calathea', tag: 'prayer' });
  });

  it('answers the same id with different data 409, keeps the stored row, and the client sees the server message', async () => {
    await client().createPlant({ id: 6, name: 'Ficus', tag: 'moraceae' });

    let serverBody: unknown;
    let serverRequestId: string | null = null;
    const recording = createPlantClient({
      baseUrl: server.url,
      token: TEST_TOKEN,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        serverBody = await response.clone().json();
        serverRequestId = response.headers.get('x-request-id');
        return response;
      },
    });

    const error = await recording.createPlant({ id: 6, name: 'Ficus', tag: 'other' }).catch((e: unknown) => e);
    expect(PlantApiError.isInstance(error)).toBe(true);
    const apiError = error as PlantApiError;
    expect(apiError.status).toBe(409);
    expect(apiError.code).toBe(409);
    expect(serverBody).toStrictEqual({ error: 409, message: apiError.message });
    expect(apiError.message).toMatch(/\bid 6\b/);
    expect(apiError.requestId).toBe(serverRequestId);

    for (const body of ['{"id":6,"name":"Ficus"}', '{"id":6,"name":"Other","tag":"moraceae"}']) {
      await expectError(await send({ body }), 409, /\bid 6\b/);
    }
    expect(await server.store.get(6n)).toStrictEqual({ id: 6n, name: 'Ficus', tag: 'moraceae' });
  });

  it('ignores unknown fields: they are neither answered nor stored', async () => {
    const response = await send({
      body: '{"id":7,"name":"Hoya","colour":"green","nested":{"a":[1,2]},"__proto__":{"tag":"x"}}',
    });
    await expectOkPlant(response, { name: 'Hoya' });
    expect(await server.store.get(7n)).toStrictEqual({ id: 7n, name: 'Hoya' });
    // Unknown fields do not make a replay a conflict either.
    await expectOkPlant(await send({ body: '{"id":7,"name":"Hoya","colour":"red"}' }), { name: 'Hoya' });
  });

  it('accepts a body up to exactly BODY_LIMIT_BYTES', async () => {
    const prefix = '{"id":8,"name":"Big","pad":"';
    const body = `${prefix}${'x'.repeat(BODY_LIMIT_BYTES - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT_BYTES);
    await expectOkPlant(await send({ body }), { name: 'Big' });
    expect(await server.store.get(8n)).toStrictEqual({ id: 8n, name: 'Big' });
  });

  it('accepts a name of exactly NAME_MAX_LENGTH characters', async () => {
    const name = 'n'.repeat(NAME_MAX_LENGTH);
    await expect(client().createPlant({ id: 9, name })).resolves.toStrictEqual({ name });
    expect(await server.store.get(9n)).toStrictEqual({ id: 9n, name });
  });

  it('counts characters as the document does (code points): a name and tag of astral characters at their limits', async () => {
    // 🌵 is one character and two UTF-16 code units: 400 units here, within the 200 characters.
    const plant = { id: 13, name: '🌵'.repeat(NAME_MAX_LENGTH), tag: '🌿'.repeat(TAG_MAX_LENGTH) };
    await expect(client().createPlant(plant)).resolves.toStrictEqual({ name: plant.name, tag: plant.tag });
    expect(await server.store.get(13n)).toStrictEqual({ ...plant, id: 13n });
    await expect(client().getPlant(13)).resolves.toStrictEqual(plant);
  });

  it('accepts application/json with charset=utf-8 and +json media types', async () => {
    const cases = [
      ['application/json; charset=utf-8', 10n],
      ['Application/JSON; Charset="UTF-8"', 11n],
      ['application/merge-patch+json', 12n],
    ] as const;
    for (const [contentType, id] of cases) {
      await expectOkPlant(await send({ body: `{"id":${id},"name":"Typed"}`, contentType }), { name: 'Typed' });
      expect(await server.store.get(id)).toStrictEqual({ id, name: 'Typed' });
    }
  });
});

describe('POST /plants ids are int64, exactly', () => {
  it('keeps 2^53 and 2^53 + 1 sent as bigint through the client as two different plants', async () => {
    await expect(client().createPlant({ id: 9007199254740992n, name: 'Even' })).resolves.toStrictEqual({
      name: 'Even',
    });
    await expect(client().createPlant({ id: 9007199254740993n, name: 'Odd' })).resolves.toStrictEqual({ name: 'Odd' });
    expect(await server.store.get(9007199254740992n)).toStrictEqual({ id: 9007199254740992n, name: 'Even' });
    expect(await server.store.get(9007199254740993n)).toStrictEqual({ id: 9007199254740993n, name: 'Odd' });
  });

  it('stores exactly 9007199254740993 from raw JSON text, not its rounded neighbour', async () => {
    await expectOkPlant(await send({ body: '{"id":9007199254740993,"name":"Exact"}' }), { name: 'Exact' });
    expect(await server.store.get(9007199254740993n)).toStrictEqual({ id: 9007199254740993n, name: 'Exact' });
    await expectNothingStored(9007199254740992n, 9007199254740994n);
  });

  it('refuses in the client an unsafe number id, which may already be rounded, and sends nothing', async () => {
    const error = await client()
      .createPlant({ id: 2 ** 53 + 2, name: 'Rounded' })
      .catch((e: unknown) => e);
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(PlantApiError.isInstance(error)).toBe(false);
    expect((error as Error).message).toMatch(/\bid\b.*bigint/);
    await expectNothingStored(9007199254740993n, 9007199254740994n, 9007199254740995n);
  });

  it('accepts both int64 bounds from raw JSON text and stores them exactly', async () => {
    await expectOkPlant(await send({ body: `{"id":${INT64_MAX},"name":"Max"}` }), { name: 'Max' });
    await expectOkPlant(await send({ body: `{"id":${INT64_MIN},"name":"Min"}` }), { name: 'Min' });
    expect(await server.store.get(INT64_MAX)).toStrictEqual({ id: INT64_MAX, name: 'Max' });
    expect(await server.store.get(INT64_MIN)).toStrictEqual({ id: INT64_MIN, name: 'Min' });
  });

  it('accepts the int64 bounds as bigint through the client', async () => {
    await expect(client().createPlant({ id: INT64_MAX, name: 'Max' })).resolves.toStrictEqual({ name: 'Max' });
    await expect(client().createPlant({ id: INT64_MIN, name: 'Min' })).resolves.toStrictEqual({ name: 'Min' });
    expect(await server.store.get(INT64_MAX)).toStrictEqual({ id: INT64_MAX, name: 'Max' });
    expect(await server.store.get(INT64_MIN)).toStrictEqual({ id: INT64_MIN, name: 'Min' });
  });

  // Each invalid id with the in-range ids it could be mistaken for (rounded, truncated, wrapped, clamped).
  const invalidIds: [source: string, lookalikes: bigint[]][] = [
    ['9223372036854775808', [INT64_MAX, INT64_MIN]],
    ['-9223372036854775809', [INT64_MIN, INT64_MAX]],
    ['18446744073709551617', [1n, INT64_MAX]],
    ['1.5', [1n, 2n]],
    ['"1"', [1n]],
    ['1e400', [INT64_MAX, INT64_MIN, 0n]],
    ['1e20', [INT64_MAX, 7766279631452241920n]],
    ['1.00000000000000001', [1n]],
    ['9007199254740993.5', [9007199254740993n, 9007199254740994n]],
    ['null', [0n]],
    ['true', [1n]],
    ['[1]', [1n]],
    ['{"value":1}', [1n]],
  ];

  it.each(invalidIds)('answers id %s with 400 naming id and stores nothing', async (source, lookalikes) => {
    const response = await send({ body: `{"id":${source},"name":"Bad id"}` });
    await expectError(response, 400, /\bid\b/);
    await expectNothingStored(...lookalikes);
  });

  it('answers an out-of-range bigint through the client with a PlantApiError 400 naming id', async () => {
    const error = await client()
      .createPlant({ id: INT64_MAX + 1n, name: 'Too big' })
      .catch((e: unknown) => e);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect((error as PlantApiError).status).toBe(400);
    expect((error as PlantApiError).message).toMatch(/\bid\b/);
    await expectNothingStored(INT64_MAX, INT64_MIN);
  });
});

describe('POST /plants with invalid fields', () => {
  const invalidBodies: [label: string, body: string, field: RegExp][] = [
    ['a missing name', '{"id":20}', /\bname is required\b/],
    ['a number name', '{"id":20,"name":42}', /\bname must be a string\b/],
    ['a null name', '{"id":20,"name":null}', /\bname must be a string\b/],
    ['an empty name', '{"id":20,"name":""}', /\bname must not be empty\b/],
    [
      'a name longer than NAME_MAX_LENGTH',
      JSON.stringify({ id: 20, name: 'n'.repeat(NAME_MAX_LENGTH + 1) }),
      new RegExp(`\\bname must be at most ${NAME_MAX_LENGTH} characters\\b`),
    ],
    [
      'a name one astral character longer than NAME_MAX_LENGTH',
      JSON.stringify({ id: 20, name: '🌵'.repeat(NAME_MAX_LENGTH + 1) }),
      new RegExp(`\\bname must be at most ${NAME_MAX_LENGTH} characters\\b`),
    ],
    [
      'a tag one astral character longer than TAG_MAX_LENGTH',
      JSON.stringify({ id: 20, name: 'Tagged', tag: '🌿'.repeat(TAG_MAX_LENGTH + 1) }),
      new RegExp(`\\btag must be at most ${TAG_MAX_LENGTH} characters\\b`),
    ],
    ['a null tag', '{"id":20,"name":"Tagged","tag":null}', /\btag must be a string\b/],
    ['a number tag', '{"id":20,"name":"Tagged","tag":7}', /\btag must be a string\b/],
    ['an empty tag', '{"id":20,"name":"Tagged","tag":""}', /\btag must not be empty\b/],
    // Lone surrogates would be stored as U+FFFD: a 200 for data that is not what was stored.
    ['a name with a lone surrogate', '{"id":20,"name":"\\ud800"}', /\bname must be valid Unicode text\b/],
    ['a tag with a lone surrogate', '{"id":20,"name":"Ok","tag":"a\\udfff"}', /\btag must be valid Unicode text\b/],
    ['a tag with a reversed surrogate pair', '{"id":20,"name":"Ok","tag":"\\udc00\\ud83d"}', /\btag must be valid/],
    ['a missing id', '{"name":"Nameless"}', /\bid is required\b/],
  ];

  it.each(invalidBodies)('answers %s with 400 naming the field and stores nothing', async (_label, body, field) => {
    await expectError(await send({ body }), 400, field);
    await expectNothingStored(20n);
  });

  it('names every invalid field in one message', async () => {
    const message = await expectError(await send({ body: '{"id":1.5,"name":"","tag":3}' }), 400);
    expect(message).toMatch(/\bid\b/);
    expect(message).toMatch(/\bname\b/);
    expect(message).toMatch(/\btag\b/);
    await expectNothingStored(1n, 2n);
  });

  it('answers invalid values sent through the client with a PlantApiError carrying the server message', async () => {
    for (const [plant, field] of [
      [{ id: 21, name: '' }, /\bname\b/],
      [{ id: 21, name: 'n'.repeat(NAME_MAX_LENGTH + 1) }, /\bname\b/],
      [{ id: 21, name: 'Ok', tag: '' }, /\btag\b/],
    ] as const) {
      const error = await client()
        .createPlant(plant)
        .catch((e: unknown) => e);
      expect(PlantApiError.isInstance(error)).toBe(true);
      expect((error as PlantApiError).status).toBe(400);
      expect((error as PlantApiError).code).toBe(400);
      expect((error as PlantApiError).message).toMatch(field);
    }
    await expectNothingStored(21n);
  });
});

describe('POST /plants with a body that is not a JSON object', () => {
  const notJson: [label: string, body: string, cause: RegExp][] = [
    ['malformed JSON', '{id: 22, name: "x"}', /not valid JSON/],
    ['truncated JSON', '{"id":22,"name":"Cut', /not valid JSON/],
    ['trailing garbage', '{"id":22,"name":"x"} extra', /not valid JSON/],
    ['a top-level array', '[{"id":22,"name":"x"}]', /top-level value must be a JSON object/],
    ['a top-level string', '"plant"', /top-level value must be a JSON object/],
    ['a top-level number', '22', /top-level value must be a JSON object/],
    ['a top-level null', 'null', /top-level value must be a JSON object/],
  ];

  it.each(notJson)('answers %s with 400 and stores nothing', async (_label, body, cause) => {
    await expectError(await send({ body }), 400, cause);
    await expectNothingStored(22n);
  });

  it('answers an empty body with 400 saying a body is required', async () => {
    await expectError(await send({ body: '' }), 400, /body is required/);
    await expectError(await send({}), 400, /body is required/);
  });

  it('answers invalid UTF-8 bytes with 400 naming UTF-8 and stores nothing', async () => {
    const bytes = new Uint8Array([...Buffer.from('{"id":23,"name":"'), 0xc3, 0x28, ...Buffer.from('"}')]);
    await expectError(await send({ body: bytes }), 400, /UTF-8/);
    await expectNothingStored(23n);
  });
});

describe('POST /plants media type and encoding', () => {
  const valid = '{"id":30,"name":"Media"}';

  it('answers text/plain with 415 naming Content-Type and stores nothing', async () => {
    await expectError(await send({ body: valid, contentType: 'text/plain' }), 415, /Content-Type/);
    await expectNothingStored(30n);
  });

  it('answers a body without Content-Type with 415 and stores nothing', async () => {
    const response = await send({ body: new Blob([valid]), contentType: null });
    await expectError(response, 415, /Content-Type/);
    await expectNothingStored(30n);
  });

  it('answers application/json with a non-UTF-8 charset with 415 naming UTF-8', async () => {
    for (const contentType of ['application/json; charset=latin1', 'application/json; charset=utf-16']) {
      await expectError(await send({ body: valid, contentType }), 415, /UTF-8/);
    }
    await expectNothingStored(30n);
  });

  it('answers a body over BODY_LIMIT_BYTES with 413 naming the limit and stores nothing', async () => {
    const body = JSON.stringify({ id: 31, name: 'Huge', pad: 'x'.repeat(BODY_LIMIT_BYTES) });
    await expectError(await send({ body }), 413, new RegExp(`limit of ${BODY_LIMIT_BYTES} bytes`));
    await expectNothingStored(31n);
  });

  it('answers a body one byte over the limit with 413', async () => {
    const prefix = '{"id":31,"name":"Huge","pad":"';
    const body = `${prefix}${'x'.repeat(BODY_LIMIT_BYTES - prefix.length - 1)}"}`;
    expect(Buffer.byteLength(body)).toBe(BODY_LIMIT_BYTES + 1);
    await expectError(await send({ body }), 413, /limit/);
    await expectNothingStored(31n);
  });

  it('accepts a gzip- or deflate-compressed valid body', async () => {
    const gzipped = await send({
      body: new Uint8Array(gzipSync('{"id":32,"name":"Zipped","tag":"gz"}')),
      headers: { 'content-encoding': 'gzip' },
    });
    await expectOkPlant(gzipped, { name: 'Zipped', tag: 'gz' });
    expect(await server.store.get(32n)).toStrictEqual({ id: 32n, name: 'Zipped', tag: 'gz' });

    const deflated = await send({
      body: new Uint8Array(deflateSync('{"id":33,"name":"Deflated"}')),
      headers: { 'content-encoding': 'deflate' },
    });
    await expectOkPlant(deflated, { name: 'Deflated' });
    expect(await server.store.get(33n)).toStrictEqual({ id: 33n, name: 'Deflated' });
  });

  it.each(['gzip', 'deflate'])('answers a corrupt %s body with 400, not 500', async (encoding) => {
    const response = await send({ body: 'not compressed at all', headers: { 'content-encoding': encoding } });
    await expectError(response, 400, /gzip\/deflate/);
  });

  it('answers malformed JSON without quoting the body back', async () => {
    const message = await expectError(await send({ body: '{"id":22,"name":secret-value}' }), 400, /not valid JSON/);
    expect(message).not.toContain('secret');
  });

  it('applies the limit after decompression: a small gzip body that inflates past it gets 413', async () => {
    const inflated = JSON.stringify({ id: 34, name: 'Bomb', pad: 'x'.repeat(BODY_LIMIT_BYTES * 8) });
    const compressed = gzipSync(inflated);
    expect(compressed.byteLength).toBeLessThan(BODY_LIMIT_BYTES);
    const response = await send({ body: new Uint8Array(compressed), headers: { 'content-encoding': 'gzip' } });
    await expectError(response, 413, /limit/);
    await expectNothingStored(34n);
  });

  it.each(['br', 'compress', 'zstd'])('answers Content-Encoding: %s with 415 naming the encoding', async (encoding) => {
    await expectError(await send({ body: valid, headers: { 'content-encoding': encoding } }), 415, /Content-Encoding/);
    await expectNothingStored(30n);
  });
});

describe('other methods and paths', () => {
  it.each(['PUT', 'DELETE', 'PATCH'])(
    'answers %s /plants with 405 and Allow: POST, GET, HEAD, OPTIONS',
    async (method) => {
      const response = await send({ method, body: '{"id":40,"name":"x"}' });
      expect(response.headers.get('allow')).toBe('POST, GET, HEAD, OPTIONS');
      await expectError(response, 405, new RegExp(`^${method} is not allowed`));
      await expectNothingStored(40n);
    },
  );

  it.each([
    ['POST', '/plant'],
    ['GET', '/'],
    ['POST', '/plants/40/leaves'],
    ['GET', '/openapi.php'],
  ])('answers %s %s with 404', async (method, path) => {
    const response = await send({ method, path, ...(method === 'GET' ? {} : { body: '{"id":40,"name":"x"}' }) });
    await expectError(response, 404, /path/);
    await expectNothingStored(40n);
  });
});

describe('response headers', () => {
  it('carries an X-Request-Id and no X-Powered-By on success and on failure', async () => {
    const responses = [
      await send({ body: '{"id":50,"name":"Headers"}' }),
      await send({ body: '{' }),
      await send({ method: 'GET' }),
      await send({ method: 'GET', path: '/' }),
      await fetch(`${server.url}/plants`, { method: 'POST' }),
    ];
    for (const response of responses) {
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(response.headers.get('x-powered-by')).toBeNull();
    }
    expect(new Set(responses.map((r) => r.headers.get('x-request-id'))).size).toBe(responses.length);
  });

  it('echoes a sane incoming X-Request-Id, also on errors and to the client error', async () => {
    const ok = await send({ body: '{"id":51,"name":"Traced"}', headers: { 'x-request-id': 'trace-51.a:b' } });
    expect(ok.headers.get('x-request-id')).toBe('trace-51.a:b');
    const failed = await send({ body: '{', headers: { 'x-request-id': 'trace-52' } });
    expect(failed.headers.get('x-request-id')).toBe('trace-52');
    const unsafe = await send({ body: '{"id":53,"name":"Traced"}', headers: { 'x-request-id': '<script>' } });
    expect(unsafe.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('store failures', () => {
  let app: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
    app = undefined;
  });

  const serveWith = async (create: PlantStore['create']) => {
    const store = fakeStore({ create });
    const listening = createServer(
      createApp({ store, authenticate: staticTokens([{ hash: hashToken(TEST_TOKEN) }]) }),
    ).listen(0, '127.0.0.1');
    app = listening;
    await new Promise((resolve) => listening.once('listening', resolve));
    const { port } = listening.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  };

  it('answers an unexpected fault with 500 and a generic message, leaking nothing', async () => {
    const secret = 'postgres://plants:hunter2@db.internal/plants';
    const url = await serveWith(async () => {
      throw new Error(`connect failed for ${secret}`);
    });
    const response = await fetch(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: '{"id":60,"name":"Faulty"}',
    });
    const text = await response.clone().text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('connect failed');
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await expectError(response, 500)).toBe('Internal server error.');

    const error = await createPlantClient({ baseUrl: url, token: TEST_TOKEN, fetch, maxRetries: 0 })
      .createPlant({ id: 60, name: 'Faulty' })
      .catch((e: unknown) => e);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect((error as PlantApiError).status).toBe(500);
    expect((error as PlantApiError).message).toBe('Internal server error.');
  });

  it('answers StoreUnavailableError with 503 and Retry-After', async () => {
    const url = await serveWith(async () => {
      throw new StoreUnavailableError('disk full at /var/lib/plants');
    });
    const response = await fetch(`${url}/plants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: '{"id":61,"name":"Unavailable"}',
    });
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    const text = await response.clone().text();
    expect(text).not.toContain('/var/lib/plants');
    await expectError(response, 503, /unavailable/);

    const error = await createPlantClient({ baseUrl: url, token: TEST_TOKEN, fetch, maxRetries: 0 })
      .createPlant({ id: 61, name: 'Unavailable' })
      .catch((e: unknown) => e);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect((error as PlantApiError).status).toBe(503);
    expect((error as PlantApiError).headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
