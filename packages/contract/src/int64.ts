import { z } from 'zod';

export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

const RANGE_MESSAGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;

/** True when `value` is an integer that fits in a signed 64-bit integer. */
export const isInt64 = (value: unknown): value is number | bigint => {
  if (typeof value === 'bigint') return value >= INT64_MIN && value <= INT64_MAX;
  // Numbers beyond 2^53 may already have been rounded, so they cannot stand for an exact id.
  return typeof value === 'number' && Number.isSafeInteger(value);
};

/**
 * An int64 on the wire. In TypeScript it is a safe-integer `number` or a `bigint`:
 * JSON numbers beyond ±(2^53 − 1) must travel as bigint to stay exact.
 */
export const Int64 = z
  .union([z.number(), z.bigint()], {
    errorMap: (_issue, ctx) => ({ message: ctx.data === undefined ? 'is required' : RANGE_MESSAGE }),
  })
  .superRefine((value, ctx) => {
    if (isInt64(value)) return;
    const unsafe = typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 2 ** 63;
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      message: unsafe ? 'must be a bigint when beyond ±(2^53 − 1), so that it stays exact' : RANGE_MESSAGE,
    });
  });
