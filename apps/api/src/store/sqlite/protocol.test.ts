import { describe, expect, it } from 'vitest';
import { OPERATIONS, OPERATIONS_BY_CODE } from './protocol.ts';

describe('the SQLite thread protocol', () => {
  it('gives every operation its own code, from 0 with no gap, so that a batch decodes by code', () => {
    const codes = Object.values(OPERATIONS).map(({ code }) => code);
    expect(codes.toSorted((a, b) => a - b)).toStrictEqual(codes.map((_, index) => index));
    for (const [name, { code, arity }] of Object.entries(OPERATIONS)) {
      expect(OPERATIONS_BY_CODE[code]).toMatchObject({ name, arity });
    }
  });
});
