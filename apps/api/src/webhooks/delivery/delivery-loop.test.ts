import { describe, expect, it } from 'vitest';
import { attemptResult } from './delivery-loop.ts';
import { parseRetryAfter } from './post-webhook.ts';

const DELAYS = [1_000, 60_000];
const middle = () => 0.5;

describe('attemptResult', () => {
  it.each([200, 201, 202, 204, 299])('counts %i as delivered', (status) => {
    expect(attemptResult({ status }, 0, DELAYS, middle)).toStrictEqual({ outcome: 'delivered', status });
  });

  it('disables on 410 Gone, whatever the attempt', () => {
    expect(attemptResult({ status: 410 }, 0, DELAYS, middle)).toMatchObject({ outcome: 'gone', status: 410 });
  });

  it.each([
    [{ status: 301 }, /301; redirects are not followed/],
    [{ status: 400 }, /answered 400/],
    [{ status: 500 }, /answered 500/],
    [{ error: 'No 2xx answer within 15000 ms.' }, /No 2xx answer/],
    [{ error: 'Connection failed: ECONNREFUSED.' }, /ECONNREFUSED/],
  ])('retries %o after the next delay of the schedule', (outcome, error) => {
    expect(attemptResult(outcome, 0, DELAYS, middle)).toMatchObject({ outcome: 'retry', retryInMs: 1_000, error });
    expect(attemptResult(outcome, 1, DELAYS, middle)).toMatchObject({ outcome: 'retry', retryInMs: 60_000 });
  });

  it('fails once the schedule is spent', () => {
    expect(attemptResult({ status: 503 }, 2, DELAYS, middle)).toStrictEqual({
      outcome: 'failed',
      status: 503,
      error: 'The receiver answered 503.',
    });
    expect(attemptResult({ error: 'Connection failed: ECONNRESET.' }, 2, DELAYS, middle)).toStrictEqual({
      outcome: 'failed',
      error: 'Connection failed: ECONNRESET.',
    });
  });

  it('fails at once what the address guard refused: no retry would be allowed either', () => {
    const refused = { error: 'Refused to connect: receiver.example resolves to a private address.', refused: true };
    expect(attemptResult(refused, 0, DELAYS, middle)).toStrictEqual({ outcome: 'failed', error: refused.error });
  });

  it('spreads retries by ±10 %', () => {
    expect(attemptResult({ status: 503 }, 1, DELAYS, () => 0)).toMatchObject({ retryInMs: 54_000 });
    expect(attemptResult({ status: 503 }, 1, DELAYS, () => 1)).toMatchObject({ retryInMs: 66_000 });
  });

  it('waits at least Retry-After, at most a day', () => {
    expect(attemptResult({ status: 429, retryAfterMs: 120_000 }, 0, DELAYS, middle)).toMatchObject({
      outcome: 'retry',
      retryInMs: 120_000,
    });
    expect(attemptResult({ status: 503, retryAfterMs: 10 }, 0, DELAYS, middle)).toMatchObject({ retryInMs: 1_000 });
    expect(attemptResult({ status: 503, retryAfterMs: 10 ** 12 }, 0, DELAYS, middle)).toMatchObject({
      retryInMs: 86_400_000,
    });
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:27:00 GMT'))).toBe(60_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
