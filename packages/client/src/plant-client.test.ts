import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  NotFoundError,
  PlantAbortError,
  PlantApiError,
  PlantClientError,
  PlantConnectionError,
  PlantTimeoutError,
} from './errors.ts';
import type { FetchLike } from './fetcher.ts';
import { createPlantClient, type RequestOptions } from './plant-client.ts';
import { hanging } from './testing/fake-fetch.ts';
import { VERSION } from './version.ts';

const BASE_URL = 'https://plants.example.com';
const TOKEN = 'secret-token-123';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch that answers `response` and records what it was asked. */
const answering = (response: () => Response) => vi.fn<FetchLike>(async () => response());

/** A fetch whose first answer is lost (the connection drops), then answers `retried`, then 500. */
const lostThenAnswered = (retried: Response) => {
  const answers = [() => Promise.reject(new TypeError('socket hang up')), async () => retried];
  return vi.fn<FetchLike>(() => (answers.shift() ?? (async () => json({}, 500)))());
};

const clientWith = (fetch: FetchLike, options: { baseUrl?: string; timeoutMs?: number; maxRetries?: number } = {}) =>
  createPlantClient({ baseUrl: BASE_URL, token: TOKEN, fetch, ...options });

const onlyCall = (fetch: ReturnType<typeof vi.fn<FetchLike>>) => {
  expect(fetch).toHaveBeenCalledTimes(1);
  const [input, init] = fetch.mock.calls[0] ?? [];
  return { url: input, method: init?.method, headers: new Headers(init?.headers), body: init?.body };
};

/** The one call was a bodiless `method` to `url` with only the client's own headers. */
const expectBodilessCall = (fetch: ReturnType<typeof vi.fn<FetchLike>>, method: string, url: string) => {
  const call = onlyCall(fetch);
  expect(call).toMatchObject({ url, method });
  expect([...call.headers]).toStrictEqual([
    ['authorization', `Bearer ${TOKEN}`],
    ['user-agent', `plant-client/${VERSION}`],
    ['x-retry-count', '0'],
  ]);
  expect(call.body).toBeUndefined();
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
    ['an empty name', { name: '' }],
    ['a control character', { name: 'Fern\u0007' }],
    ['a tag that is not a string', { name: 'Fern', tag: 3 }],
  ])('checks a 200 body other than the plant sent against the contract: %s fails', async (_, body) => {
    const error = await rejection(clientWith(answering(() => json(body))).createPlant({ id: 7, name: 'Fern' }));
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(PlantApiError.isInstance(error)).toBe(false);
  });

  it('resolves a valid 200 body other than the plant sent to what the API answered', async () => {
    const fetch = answering(() => json({ name: 'Ivy', tag: 'vine', internal: 'x' }));
    await expect(clientWith(fetch).createPlant({ id: 7, name: 'Fern' })).resolves.toStrictEqual({
      name: 'Ivy',
      tag: 'vine',
    });
  });

  it.each([
    [409, ConflictError, 'A plant with id 7 already exists with different data.'],
    [400, BadRequestError, 'name: must not be empty'],
    [401, AuthenticationError, 'A valid bearer token is required.'],
  ])('throws a PlantApiError for a %s Error body, of the class for its status', async (status, Class, message) => {
    const fetch = answering(() => json({ error: status, message }, status, { 'x-request-id': 'req-42' }));
    const error = await rejection(clientWith(fetch).createPlant({ id: 7, name: 'Fern' }));

    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(PlantApiError);
    expect(error).toBeInstanceOf(PlantClientError);
    expect(Class.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: Class.name, status, code: status, message, requestId: 'req-42' });
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
    const error = await rejection(clientWith(fetch, { maxRetries: 0 }).createPlant({ id: 7, name: 'Fern' }));

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
    const error = await rejection(clientWith(fetch, { maxRetries: 0 }).createPlant({ id: 7, name: 'Fern' }));
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

  it("sends the caller's signal as it is with Infinity, and rejects with its reason", async () => {
    const fetch = hanging();
    const controller = new AbortController();
    const pending = clientWith(fetch, { timeoutMs: Number.POSITIVE_INFINITY }).createPlant(
      { id: 7, name: 'Fern' },
      { signal: controller.signal },
    );
    const reason = new Error('user went away');
    controller.abort(reason);
    expect(await rejection(pending)).toMatchObject({ name: 'PlantAbortError', cause: reason });
    expect(fetch.mock.calls[0]?.[1].signal).toBe(controller.signal);
  });

  it('times out on fake timers too, each attempt at its own time', async () => {
    vi.useFakeTimers();
    try {
      const fetch = hanging();
      const client = clientWith(fetch, { timeoutMs: 1000, maxRetries: 0 });
      const first = rejection(client.createPlant({ id: 7, name: 'Fern' }));
      await vi.advanceTimersByTimeAsync(400);
      const second = rejection(client.createPlant({ id: 8, name: 'Ivy' }, { timeoutMs: 300 }));
      const third = rejection(client.createPlant({ id: 9, name: 'Moss' }));
      await vi.advanceTimersByTimeAsync(299);
      expect(fetch.mock.calls.map(([, init]) => init.signal?.aborted)).toStrictEqual([false, false, false]);
      await vi.advanceTimersByTimeAsync(1);
      expect(fetch.mock.calls.map(([, init]) => init.signal?.aborted)).toStrictEqual([false, true, false]);
      await vi.advanceTimersByTimeAsync(300);
      expect(fetch.mock.calls.map(([, init]) => init.signal?.aborted)).toStrictEqual([true, true, false]);
      await vi.advanceTimersByTimeAsync(400);
      for (const error of await Promise.all([first, second, third]))
        expect(PlantTimeoutError.isInstance(error)).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('getPlant, deletePlant and listPlants requests', () => {
  it('GETs {baseUrl}/plants/{id} with the bearer token and no body', async () => {
    const fetch = answering(() => json({ id: 9007199254740993n.toString(), name: 'Fern' }));
    await rejection(clientWith(fetch).getPlant(9007199254740993n));
    expectBodilessCall(fetch, 'GET', 'https://plants.example.com/plants/9007199254740993');
  });

  it('resolves getPlant to the plant read, with an exact id', async () => {
    const fetch = answering(
      () =>
        new Response('{"id":9007199254740993,"name":"Fern","tag":"fern","internal":1}', {
          headers: { 'content-type': 'application/json' },
        }),
    );
    await expect(clientWith(fetch).getPlant(9007199254740993n)).resolves.toStrictEqual({
      id: 9007199254740993n,
      name: 'Fern',
      tag: 'fern',
    });
  });

  it('DELETEs {baseUrl}/plants/{id} with the bearer token and no body', async () => {
    const fetch = answering(() => new Response(null, { status: 204 }));
    await clientWith(fetch, { baseUrl: 'https://example.com/api/' }).deletePlant(-(2n ** 63n));
    expectBodilessCall(fetch, 'DELETE', 'https://example.com/api/plants/-9223372036854775808');
  });

  it('refuses an unsafe number id before sending anything', async () => {
    const fetch = answering(() => json({ name: 'Fern' }));
    const client = clientWith(fetch);
    for (const pending of [
      client.getPlant(2 ** 60),
      client.deletePlant(2 ** 60),
      client.listPlants({ after: 2 ** 60 }),
    ]) {
      expect(PlantClientError.isInstance(await rejection(pending))).toBe(true);
    }
    expect(fetch).not.toHaveBeenCalled();
  });

  it('GETs {baseUrl}/plants with limit, tag and after as given, then each next page', async () => {
    const pages = [
      json([{ id: 1, name: 'Fern', tag: 'a b' }], 200, { link: '<?limit=1&tag=a+b&after=1>; rel="next"' }),
      json([]),
    ];
    const fetch = vi.fn<FetchLike>(async () => pages.shift() ?? json([]));
    const listed = [];
    for await (const plant of clientWith(fetch).listPlants({ pageSize: 1, tag: 'a b', after: 0 })) listed.push(plant);
    expect(listed).toStrictEqual([{ id: 1, name: 'Fern', tag: 'a b' }]);
    expect(fetch.mock.calls.map(([url, init]) => [url, init.method, init.body])).toStrictEqual([
      ['https://plants.example.com/plants?limit=1&tag=a%20b&after=0', 'GET', undefined],
      ['https://plants.example.com/plants?limit=1&tag=a%20b&after=1', 'GET', undefined],
    ]);
  });
});

describe('createPlant failures without an answer', () => {
  it('throws PlantConnectionError when fetch fails', async () => {
    const cause = new TypeError('fetch failed');
    const fetch = vi.fn<FetchLike>(async () => {
      throw cause;
    });
    const error = await rejection(clientWith(fetch, { maxRetries: 0 }).createPlant({ id: 7, name: 'Fern' }));

    expect(error).toBeInstanceOf(PlantConnectionError);
    expect(error).toBeInstanceOf(PlantClientError);
    expect(error).toMatchObject({ name: 'PlantConnectionError', cause });
    expect((error as Error).message).toContain('fetch failed');
  });

  it('throws PlantTimeoutError when no answer arrives within timeoutMs', async () => {
    const fetch = hanging();
    const started = performance.now();
    const error = await rejection(
      clientWith(fetch, { timeoutMs: 50, maxRetries: 0 }).createPlant({ id: 7, name: 'Fern' }),
    );

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
    expect(PlantAbortError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ cause: reason });
  });

  it('rejects with a PlantAbortError caused by the default AbortError when the caller aborts without a reason', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection(
      clientWith(hanging(), { timeoutMs: 10_000 }).createPlant({ id: 7, name: 'Fern' }, { signal: controller.signal }),
    );
    expect(PlantAbortError.isInstance(error) && error.cause).toBe(controller.signal.reason);
    expect(error).toMatchObject({ cause: { name: 'AbortError' } });
  });
});

describe('without JSON.rawJSON (Node 20, older browsers)', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('still sends a bigint id digit for digit', async () => {
    // The modules imported afresh below see a JSON that lacks rawJSON.
    vi.stubGlobal('JSON', Object.create(JSON, { rawJSON: { value: undefined } }));
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

describe('retries', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /** A fetch that gives these answers in turn (a thrown value is thrown), recording when each call came. */
  const sequence = (...steps: (Response | Error)[]) => {
    const times: number[] = [];
    const fetch = vi.fn<FetchLike>(async () => {
      times.push(Date.now());
      const step = steps.shift();
      if (step === undefined) throw new Error('more calls than expected');
      if (step instanceof Error) throw step;
      return step;
    });
    return { fetch, waits: () => times.slice(1).map((time, index) => time - (times[index] ?? 0)) };
  };

  /** Settles `promise` with fake timers run to the end, so that backoff waits take no real time. */
  const settle = async <T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> => {
    const settled = promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await vi.runAllTimersAsync();
    return settled;
  };

  const unavailable = (headers: Record<string, string> = {}) =>
    json({ error: 503, message: 'The plant store is temporarily unavailable; retry later.' }, 503, headers);
  const fern = { id: 7, name: 'Fern' };

  it('sends createPlant again after a 503 and resolves with the answer of the retry', async () => {
    vi.useFakeTimers();
    const { fetch } = sequence(unavailable(), json({ name: 'Fern' }));
    expect(await settle(clientWith(fetch).createPlant(fern))).toStrictEqual({ value: { name: 'Fern' } });
    expect(fetch).toHaveBeenCalledTimes(2);
    const [first, second] = fetch.mock.calls.map(([url, init]) => [url, init.method, init.body]);
    expect(second).toStrictEqual(first);
  });

  it.each([408, 429, 500, 502, 503, 504])('retries a %s twice by default, then throws it', async (status) => {
    vi.useFakeTimers();
    const fetch = answering(() => json({ error: status, message: 'Try later.' }, status, { 'x-request-id': 'req-9' }));
    const outcome = await settle(clientWith(fetch).createPlant(fern));
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(outcome).toMatchObject({ error: { status, message: 'Try later.', requestId: 'req-9' } });
  });

  it.each([400, 401, 403, 404, 409, 413, 415])('throws a %s at once', async (status) => {
    const fetch = answering(() => json({ error: status, message: 'No.' }, status));
    const error = await rejection(clientWith(fetch).createPlant(fern));
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(error).toMatchObject({ status });
  });

  it('backs off 0.5 s, then 1 s, … with full jitter', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { fetch, waits } = sequence(unavailable(), unavailable(), unavailable(), json({ name: 'Fern' }));
    await settle(clientWith(fetch, { maxRetries: 3 }).createPlant(fern));
    expect(waits()).toStrictEqual([250, 500, 1000]);
  });

  it('waits at least as long as Retry-After says, in seconds or as a date (up to 60 s), plus jitter', async () => {
    vi.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00Z') });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { fetch, waits } = sequence(
      unavailable({ 'retry-after': '3' }),
      unavailable({ 'retry-after': 'Tue, 01 Jan 2030 00:00:10 GMT' }),
      unavailable({ 'retry-after': '3600' }),
      json({ name: 'Fern' }),
    );
    await settle(clientWith(fetch, { maxRetries: 3 }).createPlant(fern));
    // The date is read when the answer arrives: 3.25 s after the first, so 6.75 s ahead.
    expect(waits()).toStrictEqual([3250, 7250, 61_000]);
  });

  it('retries a connection error, and throws the last one', async () => {
    vi.useFakeTimers();
    const { fetch } = sequence(new TypeError('fetch failed'), new TypeError('socket hang up'), json({ name: 'Fern' }));
    expect(await settle(clientWith(fetch).createPlant(fern))).toStrictEqual({ value: { name: 'Fern' } });

    const refused = sequence(new TypeError('a'), new TypeError('b'), new TypeError('ECONNREFUSED'));
    const outcome = await settle(clientWith(refused.fetch).createPlant(fern));
    expect(refused.fetch).toHaveBeenCalledTimes(3);
    expect(PlantConnectionError.isInstance((outcome as { error: unknown }).error)).toBe(true);
    expect(outcome).toMatchObject({ error: { message: expect.stringContaining('ECONNREFUSED') } });
  });

  it('gives each attempt its own timeoutMs, and retries a timeout', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const fetch = hanging();
    const started = performance.now();
    const error = await rejection(clientWith(fetch, { timeoutMs: 30, maxRetries: 2 }).createPlant(fern));
    expect(PlantTimeoutError.isInstance(error)).toBe(true);
    expect(fetch).toHaveBeenCalledTimes(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(80);
  });

  it('takes timeoutMs and maxRetries per call over the client’s', async () => {
    vi.useFakeTimers();
    const fetch = answering(() => unavailable());
    const client = clientWith(fetch, { maxRetries: 5 });
    await settle(client.createPlant(fern, { maxRetries: 1 }));
    expect(fetch).toHaveBeenCalledTimes(2);
    vi.useRealTimers();

    const slow = hanging();
    const error = await rejection(
      clientWith(slow, { timeoutMs: 60_000 }).createPlant(fern, { timeoutMs: 20, maxRetries: 0 }),
    );
    expect(PlantTimeoutError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('20 ms');
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses maxRetries %s', async (maxRetries) => {
    const fetch = answering(() => json({ name: 'Fern' }));
    expect(() => clientWith(fetch, { maxRetries })).toThrow(RangeError);
    await expect(clientWith(fetch).createPlant(fern, { maxRetries })).rejects.toThrow(RangeError);
    await expect(clientWith(fetch).getPlant(7, { timeoutMs: 0 })).rejects.toThrow(RangeError);
    expect(fetch).not.toHaveBeenCalled();
  });

  it("stops at once when the caller's signal aborts during a backoff, without another attempt", async () => {
    vi.useFakeTimers();
    const fetch = answering(() => unavailable({ 'retry-after': '5' }));
    const controller = new AbortController();
    const pending = clientWith(fetch).createPlant(fern, { signal: controller.signal });
    const settled = pending.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort(new Error('user went away'));
    await vi.runAllTimersAsync();
    expect(await settled).toMatchObject({ name: 'PlantAbortError', cause: new Error('user went away') });
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it('retries getPlant and each page of listPlants', async () => {
    vi.useFakeTimers();
    const plant = { id: 7, name: 'Fern' };
    const read = sequence(unavailable(), json(plant));
    expect(await settle(clientWith(read.fetch).getPlant(7))).toStrictEqual({ value: plant });

    const pages = sequence(
      json([plant], 200, { link: '<?after=7>; rel="next"' }),
      unavailable(),
      json([{ id: 8, name: 'Ivy' }]),
    );
    const listed = (async () => {
      const ids: unknown[] = [];
      for await (const { id } of clientWith(pages.fetch).listPlants()) ids.push(id);
      return ids;
    })();
    expect(await settle(listed)).toStrictEqual({ value: [7, 8] });
    expect(pages.fetch.mock.calls.map(([url]) => url)).toStrictEqual([
      'https://plants.example.com/plants',
      'https://plants.example.com/plants?after=7',
      'https://plants.example.com/plants?after=7',
    ]);
  });

  describe('deletePlant', () => {
    const notFound = () => json({ error: 404, message: 'No plant with id 7.' }, 404);
    const noContent = () => new Response(null, { status: 204 });

    it('resolves when a retry after a lost answer finds the plant already gone', async () => {
      vi.useFakeTimers();
      const { fetch } = sequence(new TypeError('socket hang up'), notFound());
      expect(await settle(clientWith(fetch).deletePlant(7))).toStrictEqual({ value: undefined });
      expect(fetch).toHaveBeenCalledTimes(2);
    });

    it('resolves when a retry after a 5xx finds the plant already gone', async () => {
      vi.useFakeTimers();
      const { fetch } = sequence(json({ error: 500, message: 'Internal server error.' }, 500), notFound());
      expect(await settle(clientWith(fetch).deletePlant(7))).toStrictEqual({ value: undefined });
    });

    it('throws NotFoundError when every earlier answer said nothing was done', async () => {
      vi.useFakeTimers();
      const { fetch } = sequence(json({ error: 429, message: 'Slow down.' }, 429, { 'retry-after': '1' }), notFound());
      const outcome = await settle(clientWith(fetch).deletePlant(7));
      expect(NotFoundError.isInstance((outcome as { error: unknown }).error)).toBe(true);
      expect(NotFoundError.isInstance(await rejection(clientWith(answering(notFound)).deletePlant(7)))).toBe(true);
    });

    it('resolves on a 204 after a retry', async () => {
      vi.useFakeTimers();
      const { fetch } = sequence(unavailable(), noContent());
      expect(await settle(clientWith(fetch).deletePlant(7))).toStrictEqual({ value: undefined });
    });
  });
});

/** A webhook endpoint as the API answers it. */
const endpoint = {
  id: 'ep_1',
  url: 'https://hooks.example.com/plants',
  enabled: true,
  createdAt: '2026-11-23T23:00:00.000Z',
};

describe('webhook management', () => {
  const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;

  it('POSTs {baseUrl}/webhooks and resolves with the endpoint and its secret', async () => {
    const fetch = answering(() => json({ ...endpoint, secret }, 201));
    const created = await clientWith(fetch).createWebhook({ url: endpoint.url, description: 'inventory' });
    expect(created).toEqual({ ...endpoint, secret });
    const call = onlyCall(fetch);
    expect([call.method, call.url]).toEqual(['POST', 'https://plants.example.com/webhooks']);
    expect(JSON.parse(String(call.body))).toEqual({ url: endpoint.url, description: 'inventory' });
    expect(call.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
  });

  it('sends createWebhook with an Idempotency-Key, the same on its retries, and a new one per call', async () => {
    const answers = [json({ error: 503, message: 'Unavailable.' }, 503), json({ ...endpoint, secret }, 201)];
    const fetch = vi.fn<FetchLike>(async () => answers.shift() ?? json({ ...endpoint, secret }, 201));
    const client = clientWith(fetch, { maxRetries: 2 });
    expect(await client.createWebhook({ url: endpoint.url })).toEqual({ ...endpoint, secret });
    await client.createWebhook({ url: endpoint.url });
    const keys = fetch.mock.calls.map(([, init]) => new Headers(init.headers).get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('lists, reads and deletes endpoints by id, and maps a missing one to NotFoundError', async () => {
    const fetch = vi.fn<FetchLike>(async (input, init) => {
      if (input.endsWith('/webhooks')) return json([endpoint]);
      if (init.method === 'DELETE') return new Response(null, { status: 204 });
      if (input.endsWith('/webhooks/ep_1')) return json(endpoint);
      return json({ error: 404, message: 'No webhook endpoint has id "ep_2".' }, 404);
    });
    const client = clientWith(fetch);
    expect(await client.listWebhooks()).toEqual([endpoint]);
    expect(await client.getWebhook('ep_1')).toEqual(endpoint);
    await client.deleteWebhook('ep_1');
    expect(fetch.mock.calls.at(-1)?.[0]).toBe('https://plants.example.com/webhooks/ep_1');
    expect(await rejection(client.getWebhook('ep_2'))).toBeInstanceOf(NotFoundError);
  });

  it('GETs the deliveries of an endpoint with limit, plant ids exact', async () => {
    const fetch = answering(
      () =>
        new Response('[{"id":"msg_1","plantId":9007199254740993,"status":"delivered","attempts":1}]', {
          headers: { 'content-type': 'application/json' },
        }),
    );
    const deliveries = await clientWith(fetch).listWebhookDeliveries('ep_1', { limit: 5 });
    expect(deliveries.data).toEqual([{ id: 'msg_1', plantId: 9007199254740993n, status: 'delivered', attempts: 1 }]);
    expect(deliveries.hasNextPage()).toBe(false);
    expect(onlyCall(fetch).url).toBe('https://plants.example.com/webhooks/ep_1/deliveries?limit=5');
  });

  it('PATCHes the changes and resolves with the endpoint; a taken URL is a ConflictError', async () => {
    const fetch = vi.fn<FetchLike>(async (_input, init) =>
      JSON.parse(String(init.body)).url === 'https://taken.example.com/'
        ? json({ error: 409, message: 'The url is already registered by webhook endpoint ep_2.' }, 409)
        : json({ ...endpoint, enabled: false }),
    );
    const client = clientWith(fetch);
    expect(await client.updateWebhook('ep_1', { enabled: false, description: null })).toEqual({
      ...endpoint,
      enabled: false,
    });
    const call = fetch.mock.calls[0];
    expect([call?.[1].method, call?.[0]]).toEqual(['PATCH', 'https://plants.example.com/webhooks/ep_1']);
    expect(JSON.parse(String(call?.[1].body))).toEqual({ enabled: false, description: null });
    expect(await rejection(client.updateWebhook('ep_1', { url: 'https://taken.example.com/' }))).toBeInstanceOf(
      ConflictError,
    );
  });

  it('rotates a secret with one POST and an Idempotency-Key, retried with the same key after a 503', async () => {
    const fetch = answering(() => json({ secret }));
    expect(await clientWith(fetch).rotateWebhookSecret('ep_1')).toEqual({ secret });
    const call = onlyCall(fetch);
    expect([call.method, call.url]).toEqual(['POST', 'https://plants.example.com/webhooks/ep_1/rotate-secret']);
    const answers = [json({ error: 503, message: 'Unavailable.' }, 503), json({ secret })];
    const failing = vi.fn<FetchLike>(async () => answers.shift() ?? json({ secret }));
    const client = clientWith(failing, { maxRetries: 2 });
    expect(await client.rotateWebhookSecret('ep_1')).toEqual({ secret });
    const keys = failing.mock.calls.map(([, init]) => new Headers(init.headers).get('idempotency-key'));
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
  });

  it('tests an endpoint with one POST and an Idempotency-Key, retried with the same key after a 503', async () => {
    const result = {
      webhookId: 'msg_test_1',
      eventType: 'plantDeleted',
      delivered: false,
      status: 500,
      durationMs: 12,
      error: 'The receiver answered 500.',
    };
    const fetch = answering(() => json(result));
    expect(await clientWith(fetch).testWebhook('ep_1', { eventType: 'plantDeleted' })).toStrictEqual(result);
    const call = onlyCall(fetch);
    expect([call.method, call.url]).toEqual(['POST', 'https://plants.example.com/webhooks/ep_1/test']);
    expect(JSON.parse(String(fetch.mock.calls[0]?.[1].body))).toStrictEqual({ eventType: 'plantDeleted' });
    const answers = [json({ error: 503, message: 'Unavailable.' }, 503), json(result)];
    const failing = vi.fn<FetchLike>(async () => answers.shift() ?? json(result));
    expect(await clientWith(failing, { maxRetries: 2 }).testWebhook('ep_1')).toStrictEqual(result);
    expect(JSON.parse(String(failing.mock.calls[0]?.[1].body))).toStrictEqual({});
    const keys = failing.mock.calls.map(([, init]) => new Headers(init.headers).get('idempotency-key'));
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it('recovers since a Date or an RFC 3339 string, and retries one delivery', async () => {
    const fetch = vi.fn<FetchLike>(async (input) =>
      input.endsWith('/recover') ? json({ requeued: 3 }, 202) : new Response(null, { status: 202 }),
    );
    const client = clientWith(fetch);
    expect(await client.recoverWebhook('ep_1', { since: new Date('2026-11-23T00:00:00Z') })).toEqual({ requeued: 3 });
    expect(JSON.parse(String(fetch.mock.calls[0]?.[1].body))).toEqual({ since: '2026-11-23T00:00:00.000Z' });
    expect(await client.recoverWebhook('ep_1', { since: '2026-11-23T00:00:00+01:00' })).toEqual({ requeued: 3 });
    expect(await client.retryWebhookDelivery('ep_1', 'msg_0123456789abcdef_7')).toBeUndefined();
    const last = fetch.mock.calls.at(-1);
    expect([last?.[1].method, last?.[0]]).toEqual([
      'POST',
      'https://plants.example.com/webhooks/ep_1/deliveries/msg_0123456789abcdef_7/retry',
    ]);
  });
  it('GETs the deliveries without a query when no limit is given', async () => {
    const fetch = answering(() => json([]));
    expect((await clientWith(fetch).listWebhookDeliveries('ep_1')).data).toStrictEqual([]);
    expect(onlyCall(fetch).url).toBe('https://plants.example.com/webhooks/ep_1/deliveries');
  });

  it('resolves deleteWebhook when a retry after a lost answer finds the endpoint already gone, not otherwise', async () => {
    vi.useFakeTimers();
    try {
      const fetch = lostThenAnswered(json({ error: 404, message: 'No webhook endpoint has id "ep_1".' }, 404));
      const deleted = clientWith(fetch).deleteWebhook('ep_1');
      await vi.runAllTimersAsync();
      await expect(deleted).resolves.toBeUndefined();
      expect(fetch).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
    const missing = answering(() => json({ error: 404, message: 'No webhook endpoint has id "ep_1".' }, 404));
    expect(NotFoundError.isInstance(await rejection(clientWith(missing).deleteWebhook('ep_1')))).toBe(true);
  });
});

describe('ids in the path', () => {
  type Send = (client: ReturnType<typeof clientWith>, id: string) => Promise<unknown>;
  const byId: [string, string, Send][] = [
    ['getWebhook', '', (client, id) => client.getWebhook(id)],
    ['deleteWebhook', '', (client, id) => client.deleteWebhook(id)],
    ['listWebhookDeliveries', '/deliveries', (client, id) => client.listWebhookDeliveries(id)],
    ['updateWebhook', '', (client, id) => client.updateWebhook(id, { enabled: false })],
    ['rotateWebhookSecret', '/rotate-secret', (client, id) => client.rotateWebhookSecret(id)],
    ['recoverWebhook', '/recover', (client, id) => client.recoverWebhook(id, { since: '2026-11-23T00:00:00Z' })],
    ['retryWebhookDelivery', '/deliveries/msg_1/retry', (client, id) => client.retryWebhookDelivery(id, 'msg_1')],
    ['testWebhook', '/test', (client, id) => client.testWebhook(id)],
  ];
  const hostile: [string, string][] = [
    ['../plants/1', '..%2Fplants%2F1'],
    ['a/b', 'a%2Fb'],
    ['a?b=1', 'a%3Fb%3D1'],
    ['a#b', 'a%23b'],
    ['100%', '100%25'],
  ];

  describe.each(byId)('%s', (_, rest, send) => {
    it.each(hostile)('sends %j as one encoded segment', async (id, encoded) => {
      const fetch = answering(() => json({ error: 404, message: 'No such thing.' }, 404));
      await rejection(send(clientWith(fetch), id));
      expect(onlyCall(fetch).url).toBe(`https://plants.example.com/webhooks/${encoded}${rest}`);
    });

    it.each(['', '.', '..'])('refuses the id %j before sending anything', async (id) => {
      const fetch = answering(() => json([]));
      const error = await rejection(send(clientWith(fetch), id));
      expect(PlantClientError.isInstance(error) && error.message).toBe(`An id in the path cannot be "${id}".`);
      expect(fetch).not.toHaveBeenCalled();
    });
  });

  it.each(hostile)('retryWebhookDelivery sends a delivery id %j as one encoded segment', async (id, encoded) => {
    const fetch = answering(() => new Response(null, { status: 202 }));
    await clientWith(fetch).retryWebhookDelivery('ep_1', id);
    expect(onlyCall(fetch).url).toBe(`https://plants.example.com/webhooks/ep_1/deliveries/${encoded}/retry`);
  });
});

describe('what a failure says', () => {
  const calls: [string, number, (client: ReturnType<typeof clientWith>) => Promise<unknown>][] = [
    ['a Plant', 200, (client) => client.createPlant({ id: 7, name: 'Fern' })],
    ['a plant', 200, (client) => client.getPlant(7)],
    ['a list of plants', 200, (client) => client.listPlants()],
    ['a created webhook endpoint', 201, (client) => client.createWebhook({ url: endpoint.url })],
    ['a list of webhook endpoints', 200, (client) => client.listWebhooks()],
    ['a webhook endpoint', 200, (client) => client.getWebhook('ep_1')],
    ['a list of webhook deliveries', 200, (client) => client.listWebhookDeliveries('ep_1')],
    ['a webhook endpoint', 200, (client) => client.updateWebhook('ep_1', { enabled: false })],
    ['a new webhook secret', 200, (client) => client.rotateWebhookSecret('ep_1')],
    ['a webhook recovery', 202, (client) => client.recoverWebhook('ep_1', { since: '2026-11-23T00:00:00Z' })],
    ['a webhook test result', 200, (client) => client.testWebhook('ep_1')],
  ];

  it.each(calls)('names what a success body should have been: %s', async (what, status, send) => {
    const error = await rejection(send(clientWith(answering(() => json({ unexpected: true }, status)))));
    expect(PlantClientError.isInstance(error) && !PlantApiError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ message: `The API answered ${status} with a body that is not ${what}.` });
  });

  it('says HTTP and the status alone for an error answer without a body', async () => {
    const fetch = answering(() => new Response(null, { status: 502 }));
    const error = await rejection(clientWith(fetch, { maxRetries: 0 }).getPlant(7));
    expect(error).toMatchObject({ status: 502, code: 502, message: 'HTTP 502' });
  });

  it('quotes at most the first 200 characters of an error answer that is not an Error body', async () => {
    const page = `<p>${'x'.repeat(300)}</p>`;
    const fetch = answering(() => new Response(page, { status: 502, headers: { 'content-type': 'text/html' } }));
    const error = await rejection(clientWith(fetch, { maxRetries: 0 }).getPlant(7));
    expect(error).toMatchObject({ message: `HTTP 502: ${page.slice(0, 200)}` });
  });

  it('says why an unsafe number id is refused', async () => {
    const error = await rejection(clientWith(answering(() => json({}))).getPlant(2 ** 60));
    expect(error).toMatchObject({
      name: 'PlantClientError',
      message: 'id 1152921504606847000 is not a safe integer: pass ids beyond ±(2^53 − 1) as bigint.',
    });
  });

  it.each([{ pageSize: 2 }, { tag: 'fern' }, { after: 3 }])('refuses a cursor given with %o', async (extra) => {
    const fetch = answering(() => json([]));
    const options = { cursor: 'limit=2&after=2', ...extra } as unknown as Parameters<
      ReturnType<typeof clientWith>['listPlants']
    >[0];
    const error = await rejection(clientWith(fetch).listPlants(options));
    expect(error).toBeInstanceOf(RangeError);
    expect(error).toMatchObject({
      message: 'cursor carries the page size, tag and position: give it without pageSize, tag or after.',
    });
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe('every method', () => {
  const url = 'https://hooks.example.com/plants';
  type Send = (client: ReturnType<typeof clientWith>, options?: RequestOptions) => Promise<unknown>;
  const methods: [string, Send][] = [
    ['createPlant', (client, options) => client.createPlant({ id: 7, name: 'Fern' }, options)],
    ['getPlant', (client, options) => client.getPlant(7, options)],
    ['deletePlant', (client, options) => client.deletePlant(7, options)],
    ['listPlants', (client, options) => client.listPlants(options)],
    ['createWebhook', (client, options) => client.createWebhook({ url }, options)],
    ['listWebhooks', (client, options) => client.listWebhooks(options)],
    ['getWebhook', (client, options) => client.getWebhook('ep_1', options)],
    ['deleteWebhook', (client, options) => client.deleteWebhook('ep_1', options)],
    ['listWebhookDeliveries', (client, options) => client.listWebhookDeliveries('ep_1', options)],
    ['updateWebhook', (client, options) => client.updateWebhook('ep_1', { enabled: false }, options)],
    ['rotateWebhookSecret', (client, options) => client.rotateWebhookSecret('ep_1', options)],
    ['recoverWebhook', (client, options) => client.recoverWebhook('ep_1', { since: '2026-11-23T00:00:00Z' }, options)],
    ['retryWebhookDelivery', (client, options) => client.retryWebhookDelivery('ep_1', 'msg_1', options)],
    ['testWebhook', (client, options) => client.testWebhook('ep_1', {}, options)],
  ];

  it.each(methods)('%s throws the error an Error body answers, with its message', async (_, send) => {
    const fetch = answering(() => json({ error: 404, message: 'No such thing.' }, 404));
    const error = await rejection(send(clientWith(fetch)));
    expect(NotFoundError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, message: 'No such thing.' });
  });

  it.each(methods)("%s sends the call's headers and signal", async (_, send) => {
    const fetch = answering(() => json({ error: 404, message: 'No such thing.' }, 404));
    const controller = new AbortController();
    const client = clientWith(fetch, { timeoutMs: Number.POSITIVE_INFINITY });
    await rejection(send(client, { headers: { 'x-trace': 'call' }, signal: controller.signal }));
    const [, init] = fetch.mock.calls[0] ?? [];
    expect(new Headers(init?.headers).get('x-trace')).toBe('call');
    expect(init?.signal).toBe(controller.signal);
  });

  it.each(methods)('%s is sent again after a 503 when the call asks for one retry', async (_, send) => {
    vi.useFakeTimers();
    try {
      const fetch = answering(() => json({ error: 503, message: 'Unavailable.' }, 503));
      const settled = rejection(send(clientWith(fetch, { maxRetries: 0 }), { maxRetries: 1 }));
      await vi.runAllTimersAsync();
      expect(await settled).toMatchObject({ status: 503 });
      expect(fetch).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('what refusing an option says', () => {
  it('names timeoutMs and maxRetries and what they take', async () => {
    const fetch = answering(() => json({ name: 'Fern' }));
    expect(() => clientWith(fetch, { timeoutMs: 0 })).toThrow(
      new RangeError('timeoutMs must be a positive number of milliseconds or Infinity.'),
    );
    expect(() => clientWith(fetch, { maxRetries: -1 })).toThrow(
      new RangeError('maxRetries must be a whole number, 0 or more.'),
    );
  });

  it('says why no option or call may set Authorization', async () => {
    const fetch = answering(() => json({ name: 'Fern' }));
    expect(() =>
      createPlantClient({ baseUrl: BASE_URL, token: TOKEN, fetch, defaultHeaders: { authorization: 'Bearer x' } }),
    ).toThrow(new RangeError('defaultHeaders cannot set Authorization: it comes from the token option.'));
    const error = await rejection(clientWith(fetch).getPlant(7, { headers: { Authorization: 'Bearer x' } }));
    expect(error).toMatchObject({
      name: 'PlantClientError',
      message: "Authorization is set from the client's token; a request cannot set it in its headers.",
    });
  });
});

describe('ids that are not whole numbers', () => {
  it('sends them for the API to refuse, rather than calling them unsafe', async () => {
    const fetch = answering(() => json({ error: 400, message: 'id: must be an integer' }, 400));
    const error = await rejection(clientWith(fetch).getPlant(1.5));
    expect(error).toMatchObject({ status: 400, message: 'id: must be an integer' });
    expect(onlyCall(fetch).url).toBe('https://plants.example.com/plants/1.5');
  });
});

describe('deletes after a lost answer', () => {
  it.each([
    ['deletePlant', (client: ReturnType<typeof clientWith>) => client.deletePlant(7, { maxRetries: 1 })],
    ['deleteWebhook', (client: ReturnType<typeof clientWith>) => client.deleteWebhook('ep_1', { maxRetries: 1 })],
  ])('%s still throws an error other than 404 that the retry answers', async (_, send) => {
    vi.useFakeTimers();
    try {
      const fetch = lostThenAnswered(json({ error: 409, message: 'Busy with another change.' }, 409));
      const settled = rejection(send(clientWith(fetch)));
      await vi.runAllTimersAsync();
      expect(ConflictError.isInstance(await settled)).toBe(true);
      expect(fetch).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
