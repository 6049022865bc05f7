import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FetchLike } from './fetcher.ts';
import { createLog, type PlantLogger } from './logger.ts';
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
  vi.restoreAllMocks();
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

  it('logs a failed attempt with its error, and the retry it leads to with why', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const fetch = vi.fn<FetchLike>(async () => {
      throw new TypeError('fetch failed');
    });
    const { logger, lines } = recorder();
    const pending = debugClient(fetch, logger)
      .getPlant(7, { maxRetries: 1 })
      .catch(() => undefined);
    await vi.runAllTimersAsync();
    await pending;
    expect(
      lines.map(([level, message, details]) => [level, message.replace(/\d+ ms$/, 'N ms'), details]),
    ).toStrictEqual([
      [
        'debug',
        'plant-client: GET https://p.example.com/plants/7 attempt 1: PlantConnectionError in N ms',
        {
          method: 'GET',
          url: 'https://p.example.com/plants/7',
          attempt: 1,
          error: 'PlantConnectionError',
          durationMs: expect.any(Number),
        },
      ],
      [
        'info',
        'plant-client: GET https://p.example.com/plants/7 retry 1 of 1 in 250 ms after PlantConnectionError',
        { method: 'GET', url: 'https://p.example.com/plants/7', retry: 1, delayMs: 250 },
      ],
      [
        'debug',
        'plant-client: GET https://p.example.com/plants/7 attempt 2: PlantConnectionError in N ms',
        {
          method: 'GET',
          url: 'https://p.example.com/plants/7',
          attempt: 2,
          error: 'PlantConnectionError',
          durationMs: expect.any(Number),
        },
      ],
    ]);
  });

  it('logs retries at info without the attempts, and the attempts with their answer at debug', async () => {
    vi.useFakeTimers();
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const answers = [
      json({ error: 503, message: 'busy' }, 503),
      json({ id: 7, name: 'Fern' }, 200, { 'x-request-id': 'req-2' }),
    ];
    const fetch = vi.fn<FetchLike>(async () => answers.shift() ?? json({}, 500));
    const { logger, lines } = recorder();
    const pending = createPlantClient({
      baseUrl: 'https://p.example.com',
      token: TOKEN,
      fetch,
      logger,
      logLevel: 'info',
    }).getPlant(7);
    await vi.runAllTimersAsync();
    await pending;
    expect(lines).toStrictEqual([
      [
        'info',
        'plant-client: GET https://p.example.com/plants/7 retry 1 of 2 in 250 ms after 503',
        { method: 'GET', url: 'https://p.example.com/plants/7', retry: 1, delayMs: 250 },
      ],
    ]);
  });

  it('times each attempt from its start to its answer or failure', async () => {
    vi.useFakeTimers();
    const answers = [
      () => new Promise<Response>((_, reject) => setTimeout(() => reject(new TypeError('reset')), 120)),
      () => new Promise<Response>((resolve) => setTimeout(() => resolve(json({ id: 7, name: 'Fern' })), 80)),
    ];
    const fetch = vi.fn<FetchLike>(() => (answers.shift() ?? (async () => json({}, 500)))());
    const { logger, lines } = recorder();
    // Not at the clock's zero, where adding the start time would change nothing.
    await vi.advanceTimersByTimeAsync(1000);
    const pending = debugClient(fetch, logger).getPlant(7);
    await vi.runAllTimersAsync();
    await pending;
    const debug = lines.filter(([level]) => level === 'debug');
    expect(
      debug.map(([, message, details]) => [
        message.replace(/^.*: /, ''),
        (details as { durationMs: number }).durationMs,
      ]),
    ).toStrictEqual([
      ['PlantConnectionError in 120 ms', 120],
      ['200 in 80 ms', 80],
    ]);
  });

  it('writes one debug line per attempt in the same words', async () => {
    const fetch = vi.fn<FetchLike>(async () => json({ id: 7, name: 'Fern' }, 200, { 'x-request-id': 'req-2' }));
    const { logger, lines } = recorder();
    await debugClient(fetch, logger).getPlant(7);
    expect(lines.map(([level, message]) => [level, message.replace(/\d+ ms$/, 'N ms')])).toStrictEqual([
      ['debug', 'plant-client: GET https://p.example.com/plants/7 attempt 1: 200 in N ms'],
    ]);
  });

  it('writes nothing below warn by default', async () => {
    const fetch = vi.fn<FetchLike>(async () => json({ id: 7, name: 'Fern' }));
    const { logger, lines } = recorder();
    await createPlantClient({ baseUrl: 'https://p.example.com', token: TOKEN, fetch, logger }).getPlant(7);
    expect(lines).toStrictEqual([]);
  });

  it('refuses an unknown level, naming the known ones', () => {
    const fetch = vi.fn<FetchLike>();
    expect(() =>
      createPlantClient({ baseUrl: 'https://p.example.com', token: TOKEN, fetch, logLevel: 'loud' as 'warn' }),
    ).toThrow(new RangeError('logLevel must be one of debug, info, warn, error, off.'));
  });
});

describe('createLog', () => {
  it.each([
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['off', []],
  ] as const)('at %s writes %o, each to the same level of the logger', (level, written) => {
    const { logger, lines } = recorder();
    const log = createLog(logger, level);
    for (const name of ['debug', 'info', 'warn', 'error'] as const) log[name]?.(`a ${name} line`, { level: name });
    expect(lines).toStrictEqual(written.map((name) => [name, `a ${name} line`, { level: name }]));
  });

  it('writes warn and error to the console by default', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const log = createLog();
    log.info?.('quiet', {});
    log.warn?.('loud', { why: 'x' });
    expect(info).not.toHaveBeenCalled();
    expect(warn).toHaveBeenCalledWith('loud', { why: 'x' });
  });
});
