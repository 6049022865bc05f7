import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PlantAbortError, PlantConnectionError, PlantTimeoutError } from './errors.ts';
import { isRetryableAnswer, isRetryableStatus, retryAfterMs, retryDelayMs, sleep, withRetries } from './retry.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const answer = (status: number, headers: Record<string, string> = {}) => ({ status, headers: new Headers(headers) });

afterEach(() => {
  vi.useRealTimers();
});

describe('isRetryableAnswer', () => {
  it('retries a 409 with Retry-After (an Idempotency-Key still running), not a 409 without', () => {
    expect(isRetryableAnswer({ status: 409, headers: new Headers({ 'retry-after': '1' }) })).toBe(true);
    expect(isRetryableAnswer({ status: 409, headers: new Headers() })).toBe(false);
    expect(isRetryableAnswer({ status: 503, headers: new Headers() })).toBe(true);
    expect(isRetryableAnswer({ status: 422, headers: new Headers({ 'retry-after': '1' }) })).toBe(false);
  });
});

describe('isRetryableStatus', () => {
  it.each([408, 429, 500, 502, 503, 504])('retries %s', (status) => {
    expect(isRetryableStatus(status)).toBe(true);
  });

  it.each([200, 204, 400, 401, 403, 404, 405, 409, 413, 415, 431])('does not retry %s', (status) => {
    expect(isRetryableStatus(status)).toBe(false);
  });
});

describe('retryAfterMs', () => {
  it.each([
    ['0', 0],
    ['1', 1000],
    [' 30 ', 30_000],
    ['60', 60_000],
    ['61', 60_000],
    ['86400', 60_000],
  ])('reads seconds %j as %s ms, at most 60 s', (header, ms) => {
    expect(retryAfterMs(header, NOW)).toBe(ms);
  });

  it('reads an HTTP date as the time left until it', () => {
    expect(retryAfterMs('Tue, 01 Jan 2030 00:00:05 GMT', NOW)).toBe(5000);
    expect(retryAfterMs('Tue, 01 Jan 2030 01:00:00 GMT', NOW)).toBe(60_000);
    expect(retryAfterMs('Mon, 31 Dec 2029 23:59:00 GMT', NOW)).toBe(0);
    expect(retryAfterMs('TUE, 01 JAN 2030 00:00:07 GMT', NOW)).toBe(7000);
  });

  it.each([null, '', 'soon', '-1', '1.5', '1e3', 'Tue, 99 Foo 2030'])('ignores %j', (header) => {
    expect(retryAfterMs(header, NOW)).toBeUndefined();
  });
});

describe('retryDelayMs', () => {
  it('backs off exponentially from 0.5 s, with full jitter, up to 8 s', () => {
    const top = () => 0.999_999;
    const delays = [0, 1, 2, 3, 4, 5, 10].map((retry) => Math.round(retryDelayMs(retry, undefined, top)));
    expect(delays).toStrictEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(retryDelayMs(3, undefined, () => 0.25)).toBe(1000);
    expect(retryDelayMs(3, undefined, () => 0)).toBe(0);
  });

  it("waits at least the server's Retry-After, with the backoff's jitter on top", () => {
    expect(retryDelayMs(0, answer(503, { 'retry-after': '3' }), () => 0)).toBe(3000);
    expect(retryDelayMs(0, answer(503, { 'retry-after': '3' }), () => 0.5)).toBe(3250);
    expect(retryDelayMs(4, answer(429, { 'retry-after': '0' }), () => 0.5)).toBe(4000);
  });

  it('spreads clients shed together with the same Retry-After over the following backoff window', () => {
    const shed = answer(503, { 'retry-after': '1' });
    const delays = Array.from({ length: 1000 }, (_, client) => retryDelayMs(0, shed, () => client / 1000));
    expect(Math.min(...delays)).toBe(1000);
    expect(Math.max(...delays)).toBeGreaterThan(1490);
    // No more than a tenth of them come back within any 50 ms.
    const perSlot = new Map<number, number>();
    for (const delay of delays) perSlot.set(Math.floor(delay / 50), (perSlot.get(Math.floor(delay / 50)) ?? 0) + 1);
    expect(Math.max(...perSlot.values())).toBeLessThanOrEqual(100);
  });

  it('falls back to backoff when Retry-After is unreadable', () => {
    expect(retryDelayMs(1, answer(503, { 'retry-after': 'later' }), () => 0.5)).toBe(500);
  });
});

describe('sleep', () => {
  it('resolves after the wait, leaving no listener on the signal', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const pending = sleep(1000, controller.signal);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(pending).resolves.toBeUndefined();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with a PlantAbortError caused by the reason at once when the signal is already aborted', async () => {
    const reason = new Error('gone');
    const error = await sleep(60_000, AbortSignal.abort(reason)).catch((caught: unknown) => caught);
    expect(PlantAbortError.isInstance(error) && error.cause).toBe(reason);
  });

  it('rejects with a PlantAbortError when the signal aborts during the wait, and leaves no timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort('stop');
    await expect(pending).rejects.toMatchObject({ name: 'PlantAbortError', cause: 'stop' });
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('withRetries', () => {
  const run = async <T>(promise: Promise<T>) => {
    const settled = promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await vi.runAllTimersAsync();
    return settled;
  };

  it('answers the first answer that is not worth retrying', async () => {
    vi.useFakeTimers();
    const answers = [answer(503), answer(429), answer(200)];
    const attempt = vi.fn(async () => answers.shift() ?? answer(599));
    const outcome = await run(withRetries(attempt, { maxRetries: 5, signal: undefined }));
    expect(outcome).toStrictEqual({ value: { answer: answer(200), afterUncertainAttempt: true } });
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it('answers the last retryable answer once the retries are spent', async () => {
    vi.useFakeTimers();
    const attempt = vi.fn(async () => answer(429));
    const outcome = await run(withRetries(attempt, { maxRetries: 2, signal: undefined }));
    expect(outcome).toStrictEqual({ value: { answer: answer(429), afterUncertainAttempt: false } });
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it('sends once with maxRetries 0', async () => {
    const attempt = vi.fn(async () => answer(503));
    await withRetries(attempt, { maxRetries: 0, signal: undefined });
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('retries connection errors and timeouts, and throws the last one', async () => {
    vi.useFakeTimers();
    const errors = [new PlantConnectionError('refused'), new PlantTimeoutError('slow')];
    const attempt = vi.fn(async () => {
      throw errors.shift() ?? new PlantConnectionError('reset');
    });
    const outcome = await run(withRetries(attempt, { maxRetries: 2, signal: undefined }));
    expect(outcome).toStrictEqual({ error: new PlantConnectionError('reset') });
    expect(attempt).toHaveBeenCalledTimes(3);
  });

  it('tells that an answer came after an attempt with an unknown outcome', async () => {
    vi.useFakeTimers();
    const steps = [() => Promise.reject(new PlantTimeoutError('slow')), async () => answer(404)];
    const attempt = () => (steps.shift() ?? (async () => answer(599)))();
    const outcome = await run(withRetries(attempt, { maxRetries: 2, signal: undefined }));
    expect(outcome).toStrictEqual({ value: { answer: answer(404), afterUncertainAttempt: true } });
  });

  it('throws any other error at once', async () => {
    const failure = new TypeError('bug');
    const attempt = vi.fn(async () => {
      throw failure;
    });
    await expect(withRetries(attempt, { maxRetries: 5, signal: undefined })).rejects.toBe(failure);
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('stops waiting and throws a PlantAbortError when the caller aborts during a backoff', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const attempt = vi.fn(async () => answer(503, { 'retry-after': '30' }));
    const pending = withRetries(attempt, { maxRetries: 2, signal: controller.signal });
    await vi.advanceTimersByTimeAsync(10_000);
    controller.abort('user left');
    await expect(pending).rejects.toMatchObject({ name: 'PlantAbortError', cause: 'user left' });
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('makes no attempt once the signal has aborted', async () => {
    const attempt = vi.fn(async () => answer(200));
    const error = await withRetries(attempt, { maxRetries: 2, signal: AbortSignal.abort('gone') }).catch(
      (caught: unknown) => caught,
    );
    expect(PlantAbortError.isInstance(error) && error.cause).toBe('gone');
    expect(attempt).not.toHaveBeenCalled();
  });

  it('throws the abort, not the failure, when an attempt fails because the signal aborted', async () => {
    const controller = new AbortController();
    const attempt = vi.fn(async () => {
      controller.abort('gone');
      throw new PlantConnectionError('aborted');
    });
    const error = await withRetries(attempt, { maxRetries: 2, signal: controller.signal }).catch(
      (caught: unknown) => caught,
    );
    expect(PlantAbortError.isInstance(error) && error.cause).toBe('gone');
    expect(attempt).toHaveBeenCalledTimes(1);
  });

  it('tells onRetry which retry comes next, after how long and why', async () => {
    vi.useFakeTimers();
    const answers = [answer(503, { 'retry-after': '2' }), answer(200)];
    const onRetry = vi.fn();
    await run(withRetries(async () => answers.shift() ?? answer(599), { maxRetries: 2, signal: undefined, onRetry }));
    expect(onRetry).toHaveBeenCalledOnce();
    const [retry, delayMs, why] = onRetry.mock.calls[0] ?? [];
    expect([retry, delayMs >= 2000, why.answer.status]).toStrictEqual([1, true, 503]);
  });
});
