import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlantAbortError, PlantTimeoutError } from './errors.ts';
import { createFetcher, type FetchLike } from './fetcher.ts';
import { createPlantClient } from './plant-client.ts';
import { createPlantRestClient } from './rest-client.ts';
import { hanging } from './testing/fake-fetch.ts';

const BASE_URL = 'https://plants.example.com';

const clientWith = (fetch: FetchLike, options: { timeoutMs?: number; maxRetries?: number } = {}) =>
  createPlantClient({ baseUrl: BASE_URL, token: 't', fetch, ...options });

afterEach(() => {
  vi.useRealTimers();
});

describe('an attempt without an answer in time', () => {
  it("aborts fetch with a TimeoutError that says the time, as the PlantTimeoutError's cause", async () => {
    vi.useFakeTimers();
    const fetch = hanging();
    const pending = clientWith(fetch, { timeoutMs: 1500, maxRetries: 0 })
      .getPlant(7)
      .catch((caught: unknown) => caught);
    await vi.advanceTimersByTimeAsync(1500);
    const error = await pending;
    expect(PlantTimeoutError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ message: 'GET https://plants.example.com/plants/7 got no answer within 1500 ms.' });
    const cause = (error as Error).cause;
    expect(cause).toBeInstanceOf(DOMException);
    expect(cause).toMatchObject({ name: 'TimeoutError', message: 'No answer within 1500 ms.' });
    expect(fetch.mock.calls[0]?.[1].signal?.reason).toBe(cause);
  });
});

describe("the caller's signal", () => {
  it('leaves no listener on a signal that outlives its requests', async () => {
    const fetch = vi.fn<FetchLike>(async () => new Response(null, { status: 204 }));
    const client = clientWith(fetch);
    const controller = new AbortController();
    for (const id of [1, 2, 3]) await client.deletePlant(id, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('aborts the attempt at once when the signal aborted while the token was being fetched', async () => {
    const controller = new AbortController();
    const abortedWhenSent: unknown[] = [];
    const fetch = vi.fn<FetchLike>((input, init) => {
      abortedWhenSent.push(init.signal?.aborted);
      return hanging()(input, init);
    });
    const client = createPlantClient({
      baseUrl: BASE_URL,
      fetch,
      token: async () => {
        controller.abort(new Error('user left'));
        return 'jwt';
      },
    });
    const error = await client.getPlant(7, { signal: controller.signal }).catch((caught: unknown) => caught);
    expect(PlantAbortError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ cause: new Error('user left') });
    expect(abortedWhenSent).toStrictEqual([true]);
  });
});

describe('createFetcher', () => {
  it("hands fetch the caller's signal itself when there is no timeout", async () => {
    const fetch = vi.fn<FetchLike>(async () => new Response(null, { status: 204 }));
    const { signal } = new AbortController();
    const answer = await createFetcher(fetch)(
      `${BASE_URL}/plants/7`,
      { method: 'DELETE' },
      {
        timeoutMs: Number.POSITIVE_INFINITY,
        signal,
      },
    );
    expect(answer).toMatchObject({ status: 204, body: '' });
    expect(fetch.mock.calls[0]?.[1].signal).toBe(signal);
  });
});

describe('reading the body', () => {
  const problem = '{"error":400,"message":"name: must not be empty"}';
  const answeredWith = (contentType: string) =>
    vi.fn<FetchLike>(async () => new Response(problem, { status: 400, headers: { 'content-type': contentType } }));

  it.each([
    ['application/json', 'JSON'],
    ['application/json; charset=utf-8', 'JSON'],
    ['APPLICATION/JSON', 'JSON'],
    ['application/problem+json', 'JSON'],
    ['application/vnd.plant-store.v1+json', 'JSON'],
    ['text/plain', 'text'],
    ['text/json', 'text'],
    ['application/jsonp', 'text'],
    ['application/x-ndjson', 'text'],
    ['application/+json', 'text'],
    ['x-application/json', 'text'],
  ])('reads a body labelled %s as %s (text is quoted in the error)', async (contentType, readAs) => {
    const error = await clientWith(answeredWith(contentType))
      .getPlant(7)
      .catch((caught: unknown) => caught);
    const message = readAs === 'JSON' ? 'name: must not be empty' : `HTTP 400: ${problem}`;
    expect(error).toMatchObject({ status: 400, message });
  });

  it('gives the text of a body without a content type, and of one labelled JSON that is not', async () => {
    const rest = createPlantRestClient({
      baseUrl: BASE_URL,
      token: 't',
      fetch: vi.fn<FetchLike>(async (url) =>
        url.endsWith('/1')
          ? new Response('{"id":1,"name":"Fern"}')
          : new Response('{"id":2,', { headers: { 'content-type': 'application/json' } }),
      ),
    });
    expect((await rest.getPlant({ params: { id: '1' } })).body).toBe('{"id":1,"name":"Fern"}');
    expect((await rest.getPlant({ params: { id: '2' } })).body).toBe('{"id":2,');
  });
});
