import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlantClientError } from './errors.ts';
import type { FetchLike } from './fetcher.ts';
import type { PlantClientOptions } from './options.ts';
import { createPlantClient } from './plant-client.ts';
import { createPlantRestClient } from './rest-client.ts';
import { VERSION } from './version.ts';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch answering each of `responses` in turn, and what each attempt sent. */
const sequence = (...responses: Response[]) => {
  const fetch = vi.fn<FetchLike>(async () => responses.shift() ?? json({ error: 500, message: 'none left' }, 500));
  const sent = () => fetch.mock.calls.map(([, init]) => new Headers(init.headers));
  return { fetch, sent };
};

const clientWith = (fetch: FetchLike, options: Partial<PlantClientOptions> = {}) =>
  createPlantClient({ baseUrl: 'https://plants.example.com', token: 'secret-token', fetch, ...options });

const fern = { id: 7, name: 'Fern' };

afterEach(() => {
  vi.useRealTimers();
});

describe('token', () => {
  it('calls a token function before every attempt, so a retry sends the refreshed token', async () => {
    vi.useFakeTimers();
    const { fetch, sent } = sequence(json({ error: 503, message: 'busy' }, 503), json(fern));
    const tokens = ['jwt-1', 'jwt-2'];
    const token = vi.fn(async () => tokens.shift() ?? 'jwt-n');
    const pending = clientWith(fetch, { token }).getPlant(7);
    await vi.runAllTimersAsync();
    await expect(pending).resolves.toStrictEqual(fern);
    expect(token).toHaveBeenCalledTimes(2);
    expect(sent().map((headers) => headers.get('authorization'))).toStrictEqual(['Bearer jwt-1', 'Bearer jwt-2']);
  });

  it('takes a synchronous token function too', async () => {
    const { fetch, sent } = sequence(json(fern));
    await clientWith(fetch, { token: () => 'jwt-sync' }).getPlant(7);
    expect(sent()[0]?.get('authorization')).toBe('Bearer jwt-sync');
  });

  it('rejects with a PlantClientError caused by a failing token function, without sending anything', async () => {
    const { fetch } = sequence(json(fern));
    const failure = new Error('identity provider down');
    const error = await clientWith(fetch, { token: () => Promise.reject(failure) })
      .getPlant(7)
      .catch((caught: unknown) => caught);
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ message: 'The token function failed: identity provider down', cause: failure });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('says what a token function threw that is not an Error', async () => {
    const { fetch } = sequence(json(fern));
    const error = await clientWith(fetch, { token: () => Promise.reject('no session') })
      .getPlant(7)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ message: 'The token function failed: no session', cause: 'no session' });
  });

  it.each([
    ['an empty string', ''],
    ['a number', 42],
    ['nothing', undefined],
  ])('refuses %s from the token function', async (_, token) => {
    const { fetch } = sequence(json(fern));
    const error = await clientWith(fetch, { token: () => token as string })
      .getPlant(7)
      .catch((caught: unknown) => caught);
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      message: 'The token function gave no token: it must give a non-empty string.',
    });
    expect(fetch).not.toHaveBeenCalled();
  });
});

describe('headers', () => {
  it('sends defaultHeaders with every request and a call’s headers over them', async () => {
    const { fetch, sent } = sequence(json(fern), json(fern));
    const client = clientWith(fetch, { defaultHeaders: { 'X-Team': 'garden', 'X-Trace': 'default' } });
    await client.getPlant(7);
    await client.getPlant(7, { headers: { 'x-trace': 'call-1' } });
    expect(sent().map((headers) => [headers.get('x-team'), headers.get('x-trace')])).toStrictEqual([
      ['garden', 'default'],
      ['garden', 'call-1'],
    ]);
  });

  it('never lets defaultHeaders or a call set Authorization', async () => {
    const { fetch } = sequence(json(fern));
    expect(() => clientWith(fetch, { defaultHeaders: { Authorization: 'Bearer other' } })).toThrow(RangeError);
    const error = await clientWith(fetch)
      .getPlant(7, { headers: { AUTHORIZATION: 'Bearer other' } })
      .catch((caught: unknown) => caught);
    expect(PlantClientError.isInstance(error)).toBe(true);
    expect(fetch).not.toHaveBeenCalled();
  });

  it('names the version of package.json in User-Agent', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(VERSION).toBe(manifest.version);
  });

  it('names itself in User-Agent unless the caller sets one', async () => {
    const { fetch, sent } = sequence(json(fern), json(fern));
    await clientWith(fetch).getPlant(7);
    await clientWith(fetch, { defaultHeaders: { 'User-Agent': 'garden-app/2' } }).getPlant(7);
    expect(sent().map((headers) => headers.get('user-agent'))).toStrictEqual([
      `plant-client/${VERSION}`,
      'garden-app/2',
    ]);
  });

  it.each(['document', 'WorkerGlobalScope'])(
    'leaves User-Agent to the browser where %s is defined, sending only the caller’s',
    async (global) => {
      vi.stubGlobal(global, {});
      vi.resetModules();
      try {
        const fresh = await import('./plant-client.ts');
        const { fetch, sent } = sequence(json(fern), json(fern));
        const options = { baseUrl: 'https://plants.example.com', token: 't', fetch };
        await fresh.createPlantClient(options).getPlant(7);
        await fresh.createPlantClient({ ...options, defaultHeaders: { 'User-Agent': 'garden-app/2' } }).getPlant(7);
        expect(sent().map((headers) => headers.get('user-agent'))).toStrictEqual([null, 'garden-app/2']);
      } finally {
        vi.unstubAllGlobals();
      }
    },
  );

  it('counts retries in X-Retry-Count: 0 on the first attempt, then 1, 2', async () => {
    vi.useFakeTimers();
    const busy = () => json({ error: 503, message: 'busy' }, 503);
    const { fetch, sent } = sequence(busy(), busy(), json(fern));
    const pending = clientWith(fetch).createPlant(fern);
    await vi.runAllTimersAsync();
    await pending;
    expect(sent().map((headers) => headers.get('x-retry-count'))).toStrictEqual(['0', '1', '2']);
  });

  it('gives the ts-rest client the same headers, token function and retry count', async () => {
    const { fetch, sent } = sequence(json(fern));
    const rest = createPlantRestClient({
      baseUrl: 'https://plants.example.com',
      token: async () => 'jwt-rest',
      defaultHeaders: { 'x-team': 'garden' },
      fetch,
    });
    await rest.getPlant({ params: { id: '7' }, extraHeaders: { 'x-call': 'yes' } });
    const [headers] = sent();
    expect([headers?.get('authorization'), headers?.get('x-team'), headers?.get('x-call')]).toStrictEqual([
      'Bearer jwt-rest',
      'garden',
      'yes',
    ]);
    expect(headers?.get('x-retry-count')).toBe('0');
  });
});
