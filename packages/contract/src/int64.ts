import { z } from 'zod';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const RANGE_MESSAGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;

/** True when `value` is an integer that fits in a signed 64-bit integer. */
export const isInt64 = (value: unknown): value is number | bigint => {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX;
  // Numbers beyond 2^53 may already have been rounded, so they cannot stand for an exact id.
  // Number.isSafeInteger is false for anything that is not a number.
  return Number.isSafeInteger(value);
};

const UNSAFE_MESSAGE = 'must be a bigint when beyond ±(2^53 − 1), so that it stays exact';

/** The one sentence for any way `data` fails to be an Int64. */
const int64Message = (data: unknown): string => {
  if (data === undefined) return 'is required';
  const unsafe = typeof data === 'number' && Number.isInteger(data) && Math.abs(data) < 2 ** 63;
  return unsafe ? UNSAFE_MESSAGE : RANGE_MESSAGE;
};
const errorMap = (_issue: unknown, ctx: { data: unknown }) => ({ message: int64Message(ctx.data) });

/**
 * An int64 on the wire. In TypeScript it is a safe-integer `number` or a `bigint`:
 * JSON numbers beyond ±(2^53 − 1) must travel as bigint to stay exact. Built from zod's own
 * checks, worded by one error map, rather than a refinement: zod 3 spends ten times as long on a
 * refinement (measured), and every plant created goes through this.
 */
export const Int64 = z.union(
  [
    z.number({ errorMap }).int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).finite(),
    z.bigint({ errorMap }).min(INT64_MIN).max(INT64_MAX),
  ],
  { errorMap },
);
