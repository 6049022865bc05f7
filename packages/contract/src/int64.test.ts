import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN, Int64, isInt64 } from './int64.ts';

describe('isInt64', () => {
  it.each([0, 1, -1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0n, INT64_MIN, INT64_MAX])(
    'holds for %s',
    (value) => {
      expect(isInt64(value)).toBe(true);
    },
  );

  it.each([INT64_MIN - 1n, INT64_MAX + 1n, 2 ** 53, 1.5, Number.NaN, '1', null, undefined])(
    'does not hold for %s',
    (value) => {
      expect(isInt64(value)).toBe(false);
    },
  );
});

describe('Int64 messages', () => {
  const messageOf = (value: unknown) => Int64.safeParse(value).error?.issues[0]?.message;

  it('asks for a bigint for an integer number beyond 2^53 that int64 could hold', () => {
    expect(messageOf(2 ** 62)).toBe('must be a bigint when beyond ±(2^53 − 1), so that it stays exact');
  });

  it('names the range for 2^63 and beyond, which no int64 holds', () => {
    expect(messageOf(2 ** 63)).toBe(`must be an integer from ${INT64_MIN} to ${INT64_MAX}`);
    expect(messageOf(INT64_MAX + 1n)).toBe(`must be an integer from ${INT64_MIN} to ${INT64_MAX}`);
  });
});
