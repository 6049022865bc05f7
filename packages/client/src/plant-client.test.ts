import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlantApiError, PlantClientError, PlantConnectionError, PlantTimeoutError } from './errors.ts';
import type { FetchLike } from './fetcher.ts';
import { createPlantClient } from './plant-client.ts';

const BASE_URL = 'https://plants.example.com';
const TOKEN = 'secret-token-123';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch that answers `response` and records what it was asked. */
const answering = (response: () => Response) => vi.fn<FetchLike>(async () => response());

/** A fetch that never answers: it rejects only when its signal aborts, as the real one does. */
const hanging = () =>
  vi.fn<FetchLike>(
    (_input, init) =>
      new Promise((_resolve, reject) => {
        const signal = init.signal as AbortSignal;
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  );

const clientWith = (fetch: FetchLike, options: { baseUrl?: string; timeoutMs?: number } = {}) =>
  createPlantClient({ baseUrl: BASE_URL, token: TOKEN, fetch, ...options });

const onlyCall = (fetch: ReturnType<typeof vi.fn<FetchLike>>) => {
  expect(fetch).toHaveBeenCalledTimes(1);
  const [input, init] = fetch.mock.calls[0] ?? [];
  return { url: input, method: init?.method, headers: new Headers(init?.headers), body: init?.body };
};

const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
};

describe('createPlant request', () => {
  it('POSTs JSON to {baseUrl}/plants with the bearer token', async () => {
    const fetch = answering(() => json({ name: 'Fern', tag: 'fern' }));
    await clientWith(fetch).createPlant({ id: 1, name: 'Fern', tag: 'fern' });

    const call = onlyCall(fetch);
    expect(call.url).toBe('https://plants.example.com/plants');
    expect(call.method).toBe('POST');
    expect(call.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(call.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(call.body as string)).toEqual({ id: 1, name: 'Fern', tag: 'fern' });
  });

  it.each([
    ['https://plants.example.com/', 'https://plants.example.com/plants'],
    ['https://plants.example.com//', 'https://plants.example.com/plants'],
    ['https://example.com/api/', 'https://example.com/api/plants'],
    ['https://example.com/api', 'https://example.com/api/plants'],
  ])('joins baseUrl %s to %s', async (baseUrl, url) => {
    const fetch = answering(() => json({ name: 'Fern' }));
    await clientWith(fetch, { baseUrl }).createPlant({ id: 1, name: 'Fern' });
    expect(onlyCall(fetch).url).toBe(url);
  });

  it('sends a bigint id digit for digit', async () => {
    const fetch = answering(() => json({ name: 'Fern' }));
    await clientWith(fetch).createPlant({ id: 9007199254740993n, name: 'Fern' });
    expect(onlyCall(fetch).body).toBe('{"id":9007199254740993,"name":"Fern"}');
  });

  it('sends the int64 bounds digit for digit', async () => {
    const fetch = answering(() => json({ name: 'Fern' }));
    const client = clientWith(fetch);
    await client.createPlant({ id: -(2n ** 63n), name: 'Min' });
    await client.createPlant({ id: 2n ** 63n - 1n, name: 'Max' });
    expect(fetch.mock.calls.map(([, init]) => init.body)).toEqual([
      '{"id":-9223372036854775808,"name":"Min"}',
      '{"id":9223372036854775807,"name":"Max"}',
    ]);
  });

  it.each([2 ** 60, -(2 ** 60), Number.MAX_SAFE_INTEGER + 1])(
    'refuses the unsafe number id %s before sending anything',
    async (id) => {
      const fetch = answering(() => json({ name: 'Fern' }));
      const error = await rejection(clientWith(fetch).createPlant({ id, name: 'Fern' }));
      expect(error).toBeInstanceOf(PlantClientError);
      expect(PlantApiError.isInstance(error)).toBe(false);
      expect((error as Error).message).toMatch(/bigint/);
      expect(fetch).not.toHaveBeenCalled();
    },
  );
});

describe('createPlant answers', () => {
  it('resolves a 200 to the Plant, without fields the contract does not list', async () => {
    const fetch = answering(() => json({ id: 7, name: 'Fern', tag: 'fern', internal: 'x' }));
    await expect(clientWith(fetch).createPlant({ id: 7, name: 'Fern', tag: 'fern' })).resolves.toStrictEqual({
      name: 'Fern',
      tag: 'fern',
    });
  });

  it('throws a PlantClientError when a 200 body is not a Plant', async () => {
    const fetch = answering(() => json({ title: 'Fern' }));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(PlantApiError.isInstance(error)).toBe(false);
  });

  it.each([
    [409, 'A plant with id 7 already exists with different data.'],
    [400, 'name: must not be empty'],
    [401, 'A valid bearer token is required.'],
  ])('throws PlantApiError for a %s Error body', async (status, message) => {
    const fetch = answering(() => json({ error: status, message }, status, { 'x-request-id': 'req-42' }));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));

    expect(error).toBeInstanceOf(PlantApiError);
    expect(error).toBeInstanceOf(PlantClientError);
    expect(error).toMatchObject({ name: 'PlantApiError', status, code: status, message, requestId: 'req-42' });
    expect((error as PlantApiError).headers.get('x-request-id')).toBe('req-42');
  });

  it("takes code from the body's error field, status from the response", async () => {
    const fetch = answering(() => json({ error: 4001, message: 'Custom code.' }, 400));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));
    expect(error).toMatchObject({ status: 400, code: 4001, message: 'Custom code.' });
  });

  it('leaves requestId undefined when the answer has no X-Request-Id', async () => {
    const fetch = answering(() => json({ error: 404, message: 'Not found.' }, 404));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));
    expect(error).toMatchObject({ status: 404, code: 404, message: 'Not found.', requestId: undefined });
  });

  it('throws PlantApiError for a non-JSON 502 from a proxy', async () => {
    const html = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const fetch = answering(() => new Response(html, { status: 502, headers: { 'content-type': 'text/html' } }));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));

    expect(error).toBeInstanceOf(PlantApiError);
    expect(error).toMatchObject({ status: 502, code: 502 });
    expect((error as Error).message).toContain('HTTP 502');
    expect((error as Error).message).toContain('Bad Gateway');
  });
});

describe('answers that lie about being JSON', () => {
  it('throws PlantApiError with the status for an error answer labelled JSON that is not', async () => {
    const fetch = answering(
      () => new Response('<html>bad</html>', { status: 502, headers: { 'content-type': 'application/json' } }),
    );
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 502, code: 502 });
    expect((error as Error).message).toContain('<html>bad</html>');
  });

  it('throws PlantClientError for a truncated 200 body', async () => {
    const fetch = answering(() => new Response('{"name":', { headers: { 'content-type': 'application/json' } }));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(error).not.toBeInstanceOf(SyntaxError);
  });
});

describe('timeoutMs', () => {
  it.each([0, -1, Number.NaN])('refuses %s when the client is created', (timeoutMs) => {
    expect(() =>
      clientWith(
        answering(() => json({ name: 'Fern' })),
        { timeoutMs },
      ),
    ).toThrow(RangeError);
  });

  it('sends no timeout signal with Infinity', async () => {
    const fetch = answering(() => json({ name: 'Fern' }));
    await clientWith(fetch, { timeoutMs: Number.POSITIVE_INFINITY }).createPlant({ id: 7, name: 'Fern' });
    expect(fetch.mock.calls[0]?.[1].signal).toBeUndefined();
  });
});

describe('createPlant failures without an answer', () => {
  it('throws PlantConnectionError when fetch fails', async () => {
    const cause = new TypeError('fetch failed');
    const fetch = vi.fn<FetchLike>(async () => {
      throw cause;
    });
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));

    expect(error).toBeInstanceOf(PlantConnectionError);
    expect(error).toBeInstanceOf(PlantClientError);
    expect(error).toMatchObject({ name: 'PlantConnectionError', cause });
    expect((error as Error).message).toContain('fetch failed');
  });

  it('throws PlantTimeoutError when no answer arrives within timeoutMs', async () => {
    const fetch = hanging();
    const started = performance.now();
    const error = await rejection(clientWith(fetch, { timeoutMs: 50 }).createPlant({ id: 7, name: 'Fern' }));

    expect(error).toBeInstanceOf(PlantTimeoutError);
    expect(error).toBeInstanceOf(PlantClientError);
    expect(error).toMatchObject({ name: 'PlantTimeoutError' });
    expect((error as Error).message).toContain('50 ms');
    expect(performance.now() - started).toBeGreaterThanOrEqual(40);
  });

  it("rejects with the caller's abort reason, not a timeout", async () => {
    const fetch = hanging();
    const controller = new AbortController();
    const reason = new Error('user went away');
    const pending = clientWith(fetch, { timeoutMs: 10_000 }).createPlant(
      { id: 7, name: 'Fern' },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(reason), 5);

    const error = await rejection(pending);
    expect(error).toBe(reason);
    expect(PlantClientError.isInstance(error)).toBe(false);
  });

  it('rejects with the default AbortError when the caller aborts without a reason', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(
      clientWith(hanging(), { timeoutMs: 10_000 }).createPlant({ id: 7, name: 'Fern' }, { signal: controller.signal }),
    );
    expect(error).toBe(controller.signal.reason);
    expect(error).toMatchObject({ name: 'AbortError' });
  });
});

describe('without JSON.rawJSON (Node 20, older browsers)', () => {
  const jsonObject = JSON as { rawJSON?: unknown };
  const original = jsonObject.rawJSON;

  afterEach(() => {
    jsonObject.rawJSON = original;
    vi.resetModules();
  });

  it('still sends a bigint id digit for digit', async () => {
    delete jsonObject.rawJSON;
    vi.resetModules();
    const fresh = await import('./plant-client.ts');
    const { exactJsonReplacer } = await import('@org/plant-contract');
    expect(typeof exactJsonReplacer('id', 1n), 'the contract was loaded without rawJSON').toBe('string');
    const fetch = answering(() => json({ name: 'Fern' }));
    await fresh.createPlantClient({ baseUrl: BASE_URL, token: TOKEN, fetch }).createPlant({
      id: 9007199254740993n,
      name: 'Fern',
    });
    expect(onlyCall(fetch).body).toBe('{"id":9007199254740993,"name":"Fern"}');
  });
});

describe('isInstance', () => {
  const headers = new Headers();
  const errors = {
    client: new PlantClientError('x'),
    api: new PlantApiError({ status: 409, code: 409, message: 'x', headers }),
    connection: new PlantConnectionError('x'),
    timeout: new PlantTimeoutError('x'),
  };

  it.each([
    ['PlantClientError', PlantClientError, ['client', 'api', 'connection', 'timeout']],
    ['PlantApiError', PlantApiError, ['api']],
    ['PlantConnectionError', PlantConnectionError, ['connection']],
    ['PlantTimeoutError', PlantTimeoutError, ['timeout']],
  ] as const)('%s.isInstance recognises its own errors only', (_, Class, own) => {
    for (const [kind, error] of Object.entries(errors)) {
      expect(Class.isInstance(error), kind).toBe((own as readonly string[]).includes(kind));
    }
  });

  it.each([
    ['PlantClientError', PlantClientError],
    ['PlantApiError', PlantApiError],
    ['PlantConnectionError', PlantConnectionError],
    ['PlantTimeoutError', PlantTimeoutError],
  ] as const)('%s.isInstance accepts an error from a second copy of the package', (name, Class) => {
    const foreign = { name, message: 'x', [Symbol.for(`@org/plant-client/${name}`)]: true };
    expect(foreign).not.toBeInstanceOf(Class);
    expect(Class.isInstance(foreign)).toBe(true);
  });

  it('holds across a freshly loaded copy of the classes', async () => {
    vi.resetModules();
    const copy = await import('./errors.ts');
    const error = new copy.PlantApiError({ status: 500, code: 500, message: 'x', headers });
    expect(error).not.toBeInstanceOf(PlantApiError);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(PlantTimeoutError.isInstance(error)).toBe(false);
  });

  it.each([
    ['an ordinary Error', new Error('x')],
    ['a TypeError', new TypeError('fetch failed')],
    ['an Error named like one of ours', Object.assign(new Error('x'), { name: 'PlantApiError' })],
    ['a brand that is not true', { [Symbol.for('@org/plant-client/PlantApiError')]: 'yes' }],
    ['a string brand key', { '@org/plant-client/PlantApiError': true }],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'PlantApiError'],
  ])('is false for %s', (_, value) => {
    for (const Class of [PlantClientError, PlantApiError, PlantConnectionError, PlantTimeoutError]) {
      expect(Class.isInstance(value)).toBe(false);
    }
  });
});
