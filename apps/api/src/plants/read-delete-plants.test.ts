import { createPlantClient, PlantApiError, type PlantWithId } from '@org/plant-client';
import { INT64_MAX, INT64_MIN, LIST_LIMIT_MAX, NAME_MAX_LENGTH } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { httpRequest } from '#test/http-request';
import { conformingFetch as fetch } from '#test/openapi-conformance';
import { serverPerTest } from '#test/server-per-test';
import { TEST_TOKEN } from '#test/test-server';
import { plantBytes } from '../store/row-bytes.ts';
import { PAGE_BYTES } from './plants-router.ts';

const server = serverPerTest();

const client = () => createPlantClient({ baseUrl: server.url, token: TEST_TOKEN, fetch });

const get = (path: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${TEST_TOKEN}`, ...init.headers } });

const post = (body: string) =>
  get('/plants', { method: 'POST', headers: { 'content-type': 'application/json' }, body });

const PLANTS: PlantWithId[] = [
  { id: INT64_MAX, name: 'Max', tag: 'b' },
  { id: 3, name: 'Three', tag: 'a' },
  { id: -5, name: 'Minus five' },
  { id: INT64_MIN, name: 'Min', tag: 'a' },
  { id: 9007199254740993n, name: 'Big', tag: 'a' },
  { id: 9007199254740992n, name: 'Big too', tag: 'b' },
];
const byId = (a: PlantWithId, b: PlantWithId) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1);

const seed = async () => {
  for (const plant of PLANTS) await client().createPlant(plant);
  return [...PLANTS].sort(byId);
};

const collect = async <T>(iterator: AsyncIterable<T>): Promise<T[]> => {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
};

describe('GET /plants', () => {
  it('lists every plant ordered by id, with exact ids, across pages through the client', async () => {
    const sorted = await seed();
    expect(await collect(client().listPlants({ pageSize: 2 }))).toStrictEqual(sorted);
    expect(await collect(client().listPlants())).toStrictEqual(sorted);
  });

  it('answers a plain JSON array and announces the next page in a Link header', async () => {
    const sorted = await seed();
    const first = await get('/plants?limit=4');
    expect(first.status).toBe(200);
    expect(first.headers.get('link')).toBe(`<?limit=4&after=${sorted[3]?.id}>; rel="next"`);
    // Raw text: ids beyond 2^53 are written digit for digit.
    expect(await first.text()).toBe(
      '[{"id":-9223372036854775808,"name":"Min","tag":"a"},{"id":-5,"name":"Minus five"},' +
        '{"id":3,"name":"Three","tag":"a"},{"id":9007199254740992,"name":"Big too","tag":"b"}]',
    );
    const last = await get(`/plants?limit=4&after=${sorted[3]?.id}`);
    expect(last.headers.get('link')).toBeNull();
    expect(await last.text()).toBe(
      '[{"id":9007199254740993,"name":"Big","tag":"a"},{"id":9223372036854775807,"name":"Max","tag":"b"}]',
    );
  });

  it('announces no next page when the last page is exactly full', async () => {
    await seed();
    const response = await get(`/plants?limit=${PLANTS.length}`);
    expect(response.headers.get('link')).toBeNull();
    expect(await response.json()).toHaveLength(PLANTS.length);
  });

  it('filters by tag, keeping the tag in the next link', async () => {
    const sorted = await seed();
    const tagged = sorted.filter((plant) => plant.tag === 'a');
    expect(await collect(client().listPlants({ tag: 'a', pageSize: 1 }))).toStrictEqual(tagged);
    const response = await get('/plants?limit=1&tag=a');
    expect(response.headers.get('link')).toBe(`<?limit=1&after=${INT64_MIN}&tag=a>; rel="next"`);
    expect(await collect(client().listPlants({ tag: 'none' }))).toStrictEqual([]);
  });

  it('starts after a given id', async () => {
    const sorted = await seed();
    expect(await collect(client().listPlants({ after: 9007199254740992n }))).toStrictEqual(
      sorted.filter((plant) => BigInt(plant.id) > 9007199254740992n),
    );
  });

  describe('with the longest names, in four-byte characters', () => {
    const name = '🌿'.repeat(NAME_MAX_LENGTH);
    /** How many of the plants 0, 1, … (named `name`) the first page holds: up to the one that brings it to PAGE_BYTES. */
    const firstPage = (): number => {
      let bytes = 0;
      let count = 0;
      while (bytes < PAGE_BYTES) bytes += plantBytes({ id: BigInt(count++), name });
      return count;
    };
    const plantsOf = async (count: number) => {
      const created = await Promise.all(Array.from({ length: count }, (_, id) => post(JSON.stringify({ id, name }))));
      expect(new Set(created.map(({ status }) => status))).toStrictEqual(new Set([200]));
    };

    it('ends a page at PAGE_BYTES of JSON, whatever the limit, and links the rest', async () => {
      await plantsOf(400);
      // The plant that brings the page to PAGE_BYTES is its last.
      const perPage = firstPage();
      const first = await get(`/plants?limit=${LIST_LIMIT_MAX}`);
      expect(((await first.json()) as PlantWithId[]).map(({ id }) => id)).toStrictEqual([...Array(perPage).keys()]);
      expect(first.headers.get('link')).toBe(`<?limit=${LIST_LIMIT_MAX}&after=${perPage - 1}>; rel="next"`);
      const all = await collect(client().listPlants({ pageSize: LIST_LIMIT_MAX }));
      expect(all.map(({ id }) => id)).toStrictEqual([...Array(400).keys()]);
    });

    it('serves or sheds (503, Retry-After) a flood of the largest pages, and serves a create right after', async () => {
      await plantsOf(1_000);
      const answers = await Promise.all(
        Array.from({ length: 200 }, async () => {
          const response = await get(`/plants?limit=${LIST_LIMIT_MAX}`);
          const body = (await response.json()) as { length: number; error: number };
          return response.status === 200
            ? { status: 200, plants: body.length }
            : { status: response.status, retryAfter: response.headers.get('retry-after'), error: body.error };
        }),
      );
      const served = answers.filter(({ status }) => status === 200);
      expect(served.length).toBeGreaterThan(0);
      expect(new Set(served.map((answer) => answer.plants))).toStrictEqual(new Set([firstPage()]));
      const shed = answers.filter(({ status }) => status !== 200);
      expect(new Set(shed.map((answer) => JSON.stringify(answer)))).toStrictEqual(
        new Set(shed.length === 0 ? [] : [JSON.stringify({ status: 503, retryAfter: '1', error: 503 })]),
      );
      const created = await post(JSON.stringify({ id: 1_000, name }));
      expect(created.status).toBe(200);
      expect((await httpRequest(`${server.url}/healthz`)).status).toBe(200);
    });
  });

  it('answers an empty array for an empty store', async () => {
    const response = await get('/plants');
    expect(response.status).toBe(200);
    expect(await response.json()).toStrictEqual([]);
  });

  it.each([
    ['limit=0', /\blimit must be an integer from 1 to 1000\b/],
    [`limit=${LIST_LIMIT_MAX + 1}`, /\blimit\b/],
    ['limit=2147483648', /\blimit\b/],
    ['limit=-1', /\blimit\b/],
    ['limit=1.5', /\blimit\b/],
    ['limit=abc', /\blimit\b/],
    ['limit=1&limit=2', /\blimit must be given once\b/],
    ['after=9223372036854775808', /\bafter must be an integer\b/],
    ['after=1e3', /\bafter\b/],
    ['after=', /\bafter\b/],
    ['tag=', /\btag must not be empty\b/],
    [`tag=${'t'.repeat(101)}`, /\btag must be at most 100 characters\b/],
  ])('answers ?%s with 400 naming the parameter', async (query, mentions) => {
    await expectError(await get(`/plants?${query}`), 400, mentions);
  });

  it('requires authentication', async () => {
    const response = await fetch(`${server.url}/plants`);
    await expectError(response, 401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
  });
});

describe('GET /plants/{id}', () => {
  it('answers the plant with its exact id, through the client and as raw text', async () => {
    await seed();
    expect(await client().getPlant(9007199254740993n)).toStrictEqual({ id: 9007199254740993n, name: 'Big', tag: 'a' });
    expect(await client().getPlant(9007199254740992n)).toStrictEqual({
      id: 9007199254740992n,
      name: 'Big too',
      tag: 'b',
    });
    expect(await client().getPlant(-5)).toStrictEqual({ id: -5, name: 'Minus five' });
    expect(await (await get(`/plants/${INT64_MIN}`)).text()).toBe('{"id":-9223372036854775808,"name":"Min","tag":"a"}');
  });

  it('answers 404 for an absent id, as a PlantApiError through the client', async () => {
    await expectError(await get('/plants/42'), 404, /\b42\b/);
    const error = await client()
      .getPlant(42)
      .catch((e: unknown) => e);
    expect(PlantApiError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status: 404, code: 404, message: 'No plant has id 42.' });
  });

  it.each(['abc', '1.5', '9223372036854775808', '-9223372036854775809', '1e3', '0x10', '%20'])(
    'answers id %s with 400 naming id',
    async (id) => {
      await expectError(await get(`/plants/${id}`), 400, /\bid must be an integer\b/);
    },
  );
});

describe('DELETE /plants/{id}', () => {
  it('deletes with 204 and no body, then answers 404, and the id may be created again', async () => {
    await seed();
    const response = await get('/plants/9007199254740993', { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(await server.store.get(9007199254740993n)).toBeUndefined();
    expect(await server.store.get(9007199254740992n)).toStrictEqual({
      id: 9007199254740992n,
      name: 'Big too',
      tag: 'b',
    });

    await expectError(await get('/plants/9007199254740993', { method: 'DELETE' }), 404, /9007199254740993/);
    await expect(client().createPlant({ id: 9007199254740993n, name: 'Reborn' })).resolves.toStrictEqual({
      name: 'Reborn',
    });
    expect(await server.store.get(9007199254740993n)).toStrictEqual({ id: 9007199254740993n, name: 'Reborn' });
  });

  it('deletes through the client, which throws PlantApiError 404 for an absent id', async () => {
    await seed();
    await expect(client().deletePlant(3)).resolves.toBeUndefined();
    expect(await server.store.get(3n)).toBeUndefined();
    await expect(client().deletePlant(3)).rejects.toMatchObject({ status: 404, code: 404 });
  });

  it('answers a bad id with 400 and deletes nothing', async () => {
    await seed();
    await expectError(await get('/plants/3.0', { method: 'DELETE' }), 400, /\bid\b/);
    expect(await server.store.get(3n)).toBeDefined();
  });

  it('requires authentication and deletes nothing without it', async () => {
    await seed();
    await expectError(await fetch(`${server.url}/plants/3`, { method: 'DELETE' }), 401);
    expect(await server.store.get(3n)).toBeDefined();
  });
});

describe('other methods on /plants/{id}', () => {
  it.each(['POST', 'PUT', 'PATCH'])('answers %s with 405 and Allow: GET, HEAD, DELETE, OPTIONS', async (method) => {
    const response = await get('/plants/3', { method, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.headers.get('allow')).toBe('GET, HEAD, DELETE, OPTIONS');
    await expectError(response, 405, new RegExp(`^${method} is not allowed`));
  });

  it.each(['GET', 'DELETE', 'POST'])(
    'answers %s with an id that is not valid percent-encoding with 400 naming the segment',
    async (method) => {
      const response = await get('/plants/%E0', { method });
      await expectError(response, 400, /^The path segment "%E0" is not valid percent-encoding\.$/);
    },
  );
});

describe('OPTIONS and HEAD', () => {
  it.each([
    ['/plants', 'POST, GET, HEAD, OPTIONS'],
    ['/plants/3', 'GET, HEAD, DELETE, OPTIONS'],
  ])('answers OPTIONS %s with 204 and Allow, without needing a token', async (path, allow) => {
    const response = await fetch(`${server.url}${path}`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe(allow);
    expect(await response.text()).toBe('');
  });

  it('answers HEAD like GET, without a body', async () => {
    await seed();
    const head = await get('/plants/3', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await head.text()).toBe('');
    const unauthenticated = await fetch(`${server.url}/plants/3`, { method: 'HEAD' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('www-authenticate')).toBe('Bearer realm="plant-store"');
  });
});

describe('headers of a JSON API', () => {
  it('sends no-store, nosniff and a locked-down CSP on answers and errors alike, and no X-Powered-By', async () => {
    for (const response of [await get('/plants'), await get('/plants/42'), await fetch(`${server.url}/nowhere`)]) {
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy.split(/;\s*/)).toEqual(["default-src 'none'", "frame-ancestors 'none'"]);
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(response.headers.get('x-powered-by')).toBeNull();
    }
  });
});
