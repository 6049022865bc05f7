import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FetchLike } from './fetcher.ts';
import type { PlantLogger } from './logger.ts';
import { createPlantClient } from './plant-client.ts';

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const recorder = () => {
  const lines: [string, string, unknown][] = [];
  const logger: PlantLogger = {
    debug: (message, details) => lines.push(['debug', message, details]),
    info: (message, details) => lines.push(['info', message, details]),
    warn: (message, details) => lines.push(['warn', message, details]),
    error: (message, details) => lines.push(['error', message, details]),
  };
  return { logger, lines };
};

const TOKEN = 'secret-token-never-logged';

afterEach(() => {
  vi.useRealTimers();
});

/** A client that logs every attempt to `logger`. */
const debugClient = (fetch: FetchLike, logger: PlantLogger) =>
  createPlantClient({ baseUrl: 'https://p.example.com', token: TOKEN, fetch, logger, logLevel: 'debug' });

describe('logger and logLevel', () => {
  it('logs one debug line per attempt, and each retry at info, never the token', async () => {
    vi.useFakeTimers();
    const answers = [
      json({ error: 503, message: 'busy' }, 503, { 'x-request-id': 'req-1' }),
      json({ id: 7, name: 'Fern' }, 200, { 'x-request-id': 'req-2' }),
    ];
    const fetch = vi.fn<FetchLike>(async () => answers.shift() ?? json({}, 500));
    const { logger, lines } = recorder();
    const client = debugClient(fetch, logger);
    const pending = client.getPlant(7);
    await vi.runAllTimersAsync();
    await pending;
    expect(lines.map(([level]) => level)).toStrictEqual(['debug', 'info', 'debug']);
    expect(lines[0]?.[2]).toMatchObject({
      method: 'GET',
      url: 'https://p.example.com/plants/7',
      attempt: 1,
      status: 503,
      durationMs: expect.any(Number),
      requestId: 'req-1',
    });
    expect(lines[1]?.[1]).toMatch(
      /^plant-client: GET https:\/\/p\.example\.com\/plants\/7 retry 1 of 2 in \d+ ms after 503$/,
    );
    expect(lines[2]?.[2]).toMatchObject({ attempt: 2, status: 200, requestId: 'req-2' });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
  });

  it('logs a failed attempt with its error', async () => {
    const fetch = vi.fn<FetchLike>(async () => {
      throw new TypeError('fetch failed');
    });
    const { logger, lines } = recorder();
    const client = debugClient(fetch, logger);
    await client.getPlant(7, { maxRetries: 0 }).catch(() => undefined);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.[2]).toMatchObject({ attempt: 1, error: 'PlantConnectionError' });
  });

  it('writes nothing below warn by default', async () => {
    const fetch = vi.fn<FetchLike>(async () => json({ id: 7, name: 'Fern' }));
    const { logger, lines } = recorder();
    await createPlantClient({ baseUrl: 'https://p.example.com', token: TOKEN, fetch, logger }).getPlant(7);
    expect(lines).toStrictEqual([]);
  });

  it('refuses an unknown level', () => {
    const fetch = vi.fn<FetchLike>();
    expect(() =>
      createPlantClient({ baseUrl: 'https://p.example.com', token: TOKEN, fetch, logLevel: 'loud' as 'warn' }),
    ).toThrow(RangeError);
  });
});
