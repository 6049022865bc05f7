import { ResponseValidationError, UnknownStatusError } from '@ts-rest/core';
import { describe, expect, it, vi } from 'vitest';
import { PlantTimeoutError } from './errors.ts';
import type { FetchLike } from './fetcher.ts';
import { createPlantRestClient, type PlantRestClientOptions } from './rest-client.ts';

const json = (body: string, status = 200, headers: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } });

const restWith = (fetch: FetchLike, options: Partial<PlantRestClientOptions> = {}) =>
  createPlantRestClient({ baseUrl: 'https://plants.example.com/', token: 't0k3n', fetch, ...options });

describe('createPlantRestClient', () => {
  it("sends ts-rest's request with a bigint body digit for digit, and answers { status, body, headers }", async () => {
    const fetch = vi.fn<FetchLike>(async () => json('{"name":"Fern"}', 200, { 'x-request-id': 'req-1' }));
    const answer = await restWith(fetch).createPlant({ body: { id: 2n ** 63n - 1n, name: 'Fern' } });

    expect(answer).toMatchObject({ status: 200, body: { name: 'Fern' } });
    expect(answer.headers.get('x-request-id')).toBe('req-1');
    const [url, init] = fetch.mock.calls[0] ?? [];
    expect(url).toBe('https://plants.example.com/plants');
    expect(init?.method).toBe('POST');
    expect(init?.body).toBe('{"id":9223372036854775807,"name":"Fern"}');
    expect(new Headers(init?.headers).get('authorization')).toBe('Bearer t0k3n');
    expect(new Headers(init?.headers).get('content-type')).toBe('application/json');
  });

  it('reads ids beyond 2^53 exactly, and builds paths and queries from the contract', async () => {
    const fetch = vi.fn<FetchLike>(async () => json('[{"id":9007199254740993,"name":"Fern"}]'));
    const rest = restWith(fetch);
    const listed = await rest.listPlants({ query: { limit: '1', after: '9007199254740992' } });
    expect(listed).toMatchObject({ status: 200, body: [{ id: 9007199254740993n, name: 'Fern' }] });
    await rest.getPlant({ params: { id: '-9223372036854775808' } });
    expect(fetch.mock.calls.map(([url]) => url)).toStrictEqual([
      'https://plants.example.com/plants?limit=1&after=9007199254740992',
      'https://plants.example.com/plants/-9223372036854775808',
    ]);
  });

  it('resolves an error status the contract lists, with its body', async () => {
    const fetch = vi.fn<FetchLike>(async () => json('{"error":404,"message":"No plant with id 7."}', 404));
    const answer = await restWith(fetch).getPlant({ params: { id: '7' } });
    expect(answer).toMatchObject({ status: 404, body: { error: 404, message: 'No plant with id 7.' } });
  });

  it('retries as configured, then rejects a status the contract does not list with UnknownStatusError', async () => {
    const fetch = vi.fn<FetchLike>(async () => new Response('Bad Gateway', { status: 502 }));
    const error = await restWith(fetch)
      .getPlant({ params: { id: '7' }, maxRetries: 1, timeoutMs: 1_000 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnknownStatusError);
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it("takes a call's timeout and the caller's signal", async () => {
    const hanging = vi.fn<FetchLike>(
      (_url, init) =>
        new Promise((_resolve, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason))),
    );
    const timedOut = await restWith(hanging, { maxRetries: 0 })
      .getPlant({ params: { id: '7' }, timeoutMs: 20 })
      .catch((caught: unknown) => caught);
    expect(PlantTimeoutError.isInstance(timedOut)).toBe(true);

    const controller = new AbortController();
    const pending = restWith(hanging).getPlant({ params: { id: '7' }, fetchOptions: { signal: controller.signal } });
    controller.abort(new Error('gone'));
    await expect(pending).rejects.toMatchObject({ name: 'PlantAbortError', cause: new Error('gone') });
  });

  it("validates answers against the contract with ts-rest's validateResponse", async () => {
    const fetch = vi.fn<FetchLike>(async () => json('{"title":"Fern"}'));
    const error = await restWith(fetch, { validateResponse: true })
      .createPlant({ body: { id: 1, name: 'Fern' } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseValidationError);
    await expect(restWith(fetch).createPlant({ body: { id: 1, name: 'Fern' } })).resolves.toMatchObject({
      body: { title: 'Fern' },
    });
  });
});
