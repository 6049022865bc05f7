import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectionError, Faults, faultAnswer, isDroppedConnection, wait } from './faults.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('Faults', () => {
  it('refuses a rule with times that is not a positive integer or Infinity, or a delay without ms from 0', () => {
    const faults = new Faults();
    for (const times of [0, -1, 1.5, Number.NaN]) {
      expect(() => faults.add({ type: 'internal-error' }, { times })).toThrow(
        new RangeError(`times must be a positive integer or Infinity (got ${times}).`),
      );
    }
    expect(() => faults.add({ type: 'delay', ms: -1 })).toThrow(
      new RangeError('A delay fault needs ms, a finite number of milliseconds from 0 (got -1).'),
    );
    faults.add({ type: 'delay', ms: 0 });
    faults.add({ type: 'internal-error' }, { times: Number.POSITIVE_INFINITY });
    expect(faults.take('listPlants')).toStrictEqual({ type: 'delay', ms: 0 });
    expect(faults.take('listPlants')).toStrictEqual({ type: 'internal-error' });
  });

  it('names the fault types when given none it knows', () => {
    expect(() => new Faults().add(undefined as never)).toThrow(
      new RangeError(
        'Unknown fault type undefined; the types are rate-limit, unavailable, internal-error, lost-answer, delay, connection-error.',
      ),
    );
  });

  it('drops a rule once spent, and only that one', () => {
    const faults = new Faults();
    faults.add({ type: 'rate-limit' }, { route: 'createPlant' });
    faults.add({ type: 'unavailable' }, { route: 'listPlants', times: 2 });
    expect(faults.take('createPlant')).toStrictEqual({ type: 'rate-limit' });
    expect(faults.take('createPlant')).toBeUndefined();
    expect(faults.take('listPlants')).toStrictEqual({ type: 'unavailable' });
    expect(faults.take('listPlants')).toStrictEqual({ type: 'unavailable' });
    expect(faults.take('listPlants')).toBeUndefined();
  });
});

describe('faultAnswer', () => {
  it('words each status fault as the service does, Retry-After 1 s unless told', () => {
    expect(faultAnswer({ type: 'rate-limit' })).toStrictEqual({
      status: 429,
      headers: { 'retry-after': '1' },
      body: { error: 429, message: 'Too many requests with this token; retry after 1 s.' },
    });
    expect(faultAnswer({ type: 'rate-limit', retryAfterSeconds: 7 })).toStrictEqual({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: 429, message: 'Too many requests with this token; retry after 7 s.' },
    });
    expect(faultAnswer({ type: 'unavailable' })).toStrictEqual({
      status: 503,
      headers: { 'retry-after': '1' },
      body: { error: 503, message: 'The plant store is temporarily unavailable; retry later.' },
    });
    expect(faultAnswer({ type: 'unavailable', retryAfterSeconds: 30 })?.headers).toStrictEqual({ 'retry-after': '30' });
    expect(faultAnswer({ type: 'internal-error' })).toStrictEqual({
      status: 500,
      headers: {},
      body: { error: 500, message: 'Internal server error.' },
    });
    expect(faultAnswer({ type: 'lost-answer' })).toBeUndefined();
  });
});

describe('connectionError', () => {
  it("is undici's TypeError, its cause naming the fault, and marked as a dropped connection", () => {
    const error = connectionError();
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('fetch failed');
    expect((error.cause as Error).message).toBe('The Plant Store fake dropped the connection (a fault rule).');
    expect(isDroppedConnection(error)).toBe(true);
    // The mark is global (Symbol.for): another copy of the package recognises it.
    expect(isDroppedConnection({ [Symbol.for('@org/plant-client/testing/dropped-connection')]: true })).toBe(true);
  });

  it('recognises nothing else as a dropped connection', () => {
    for (const other of [new TypeError('fetch failed'), {}, null, undefined, 'fetch failed', 0]) {
      expect(isDroppedConnection(other)).toBe(false);
    }
  });
});

describe('wait', () => {
  it('resolves after ms, and leaves no listener on the signal', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    let done = false;
    const waited = wait(50, controller.signal).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(49);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waited;
    expect(done).toBe(true);
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
  });

  it('rejects with the reason when the signal aborts first, and clears its timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const waited = wait(1_000, controller.signal);
    controller.abort(new Error('gave up'));
    await expect(waited).rejects.toThrow('gave up');
    expect(vi.getTimerCount()).toBe(0);
    const aborted = AbortSignal.abort(new Error('already'));
    await expect(wait(1_000, aborted)).rejects.toThrow('already');
  });
});
