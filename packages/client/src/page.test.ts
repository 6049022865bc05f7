import { describe, expect, it, vi } from 'vitest';
import { NotFoundError, PlantAbortError, PlantClientError, PlantTimeoutError } from './errors.ts';
import type { FetchLike } from './fetcher.ts';
import { createPlantClient } from './plant-client.ts';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const plants = Array.from({ length: 5 }, (_, index) => ({ id: index + 1, name: `Plant ${index + 1}` }));

/** The API's paging over `plants`: `limit` after `after`, with a Link to the next page. */
const pagingFetch = () =>
  vi.fn<FetchLike>(async (url) => {
    const query = new URL(url).searchParams;
    const limit = Number(query.get('limit') ?? 100);
    const after = Number(query.get('after') ?? 0);
    const page = plants.filter((plant) => plant.id > after).slice(0, limit);
    const last = page.at(-1);
    const more = last !== undefined && last.id < plants.length;
    return json(page, 200, {
      'x-request-id': `req-after-${after}`,
      ...(more ? { link: `<?limit=${limit}&after=${last.id}>; rel="next"` } : {}),
    });
  });

const clientWith = (fetch: FetchLike) =>
  createPlantClient({ baseUrl: 'https://plants.example.com', token: 't', fetch });

describe('listPlants pages', () => {
  it('awaited, is the first page with its cursor; getNextPage goes on until the last', async () => {
    const fetch = pagingFetch();
    const first = await clientWith(fetch).listPlants({ pageSize: 2 });
    expect(first.data).toStrictEqual(plants.slice(0, 2));
    expect(first.hasNextPage()).toBe(true);
    expect(first.nextCursor).toBe('limit=2&after=2');
    const second = await first.getNextPage();
    const third = await second.getNextPage();
    expect([second.data, third.data]).toStrictEqual([plants.slice(2, 4), plants.slice(4)]);
    expect([third.hasNextPage(), third.nextCursor]).toStrictEqual([false, undefined]);
    await expect(third.getNextPage()).rejects.toThrow(
      new PlantClientError('This is the last page: check hasNextPage() first.'),
    );
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('fetches the page a cursor points at', async () => {
    const fetch = pagingFetch();
    const page = await clientWith(fetch).listPlants({ cursor: 'limit=2&after=2' });
    expect(page.data).toStrictEqual(plants.slice(2, 4));
    expect(fetch.mock.calls[0]?.[0]).toBe('https://plants.example.com/plants?limit=2&after=2');
  });

  it('iterated with for await, gives every plant of every page, as before', async () => {
    const listed = [];
    for await (const plant of clientWith(pagingFetch()).listPlants({ pageSize: 2 })) listed.push(plant);
    expect(listed).toStrictEqual(plants);
  });

  it('gives the first page with its response and request id', async () => {
    const { data, response, requestId } = await clientWith(pagingFetch()).listPlants({ pageSize: 2 }).withResponse();
    expect(data.data).toHaveLength(2);
    expect([response.status, requestId]).toStrictEqual([200, 'req-after-0']);
  });

  it('stops the iteration at once when the signal aborts, with the items of the page in hand unyielded', async () => {
    const fetch = pagingFetch();
    const controller = new AbortController();
    const listed: unknown[] = [];
    const error = await (async () => {
      for await (const plant of clientWith(fetch).listPlants({ pageSize: 5, signal: controller.signal })) {
        listed.push(plant);
        controller.abort(new Error('user left'));
      }
    })().catch((caught: unknown) => caught);
    expect(listed).toStrictEqual(plants.slice(0, 1));
    expect(PlantAbortError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ cause: new Error('user left') });
  });
});

describe('withResponse', () => {
  it('gives the data with the response and its X-Request-Id, from a single request', async () => {
    const fetch = vi.fn<FetchLike>(async () => json({ id: 7, name: 'Fern' }, 200, { 'x-request-id': 'req-7' }));
    const pending = clientWith(fetch).getPlant(7);
    const { data, response, requestId } = await pending.withResponse();
    expect(data).toStrictEqual({ id: 7, name: 'Fern' });
    expect([response.status, response.headers.get('x-request-id'), requestId]).toStrictEqual([200, 'req-7', 'req-7']);
    await expect(pending).resolves.toStrictEqual(data);
    expect(fetch).toHaveBeenCalledOnce();
  });

  it('rejects as the call does, the error keeping the request id and headers', async () => {
    const fetch = vi.fn<FetchLike>(async () =>
      json({ error: 404, message: 'no plant 7' }, 404, { 'x-request-id': 'req-404' }),
    );
    const error = await clientWith(fetch)
      .getPlant(7)
      .withResponse()
      .catch((caught: unknown) => caught);
    expect(NotFoundError.isInstance(error) && [error.requestId, error.headers.get('x-request-id')]).toStrictEqual([
      'req-404',
      'req-404',
    ]);
  });

  it('runs finally once the call settles, keeping its data or its error', async () => {
    const done = vi.fn();
    const found = vi.fn<FetchLike>(async () => json({ id: 7, name: 'Fern' }));
    await expect(clientWith(found).getPlant(7).finally(done)).resolves.toStrictEqual({ id: 7, name: 'Fern' });
    const missing = vi.fn<FetchLike>(async () => json({ error: 404, message: 'no plant 7' }, 404));
    await expect(clientWith(missing).getPlant(7).finally(done)).rejects.toMatchObject({ message: 'no plant 7' });
    expect(done).toHaveBeenCalledTimes(2);
  });

  it('resolves a delete with no data and the 204 response', async () => {
    const fetch = vi.fn<FetchLike>(async () => new Response(null, { status: 204 }));
    const { data, response } = await clientWith(fetch).deletePlant(7).withResponse();
    expect([data, response.status]).toStrictEqual([undefined, 204]);
  });
});

describe('aborts and deadlines', () => {
  /** A fetch that answers only when its signal aborts, as the real one does. */
  const hanging = vi.fn<FetchLike>(
    (_url, init) =>
      new Promise((_resolve, reject) => {
        const signal = init.signal as AbortSignal;
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
  );

  it('rejects an AbortSignal.timeout() as a PlantTimeoutError, its cause the TimeoutError', async () => {
    const error = await clientWith(hanging)
      .getPlant(7, { signal: AbortSignal.timeout(10), maxRetries: 3 })
      .catch((caught: unknown) => caught);
    expect(PlantTimeoutError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'PlantTimeoutError',
      message: "The request was aborted by its signal's deadline.",
      cause: { name: 'TimeoutError' },
    });
  });

  it('rejects an abort as a PlantAbortError, a PlantClientError like every failure', async () => {
    const error = await clientWith(hanging)
      .getPlant(7, { signal: AbortSignal.abort('navigated away') })
      .catch((caught: unknown) => caught);
    expect(PlantAbortError.isInstance(error) && PlantClientError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      name: 'PlantAbortError',
      message: 'The request was aborted by its signal.',
      cause: 'navigated away',
    });
  });

  it.each([null, 'TimeoutError', { name: 'Error' }, class TimeoutError {}])(
    'rejects an abort for the reason %o as a PlantAbortError',
    async (reason) => {
      const error = await clientWith(hanging)
        .getPlant(7, { signal: AbortSignal.abort(reason) })
        .catch((caught: unknown) => caught);
      expect(PlantAbortError.isInstance(error)).toBe(true);
      expect((error as Error).cause).toBe(reason);
    },
  );
});
