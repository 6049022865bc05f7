import { describe, expect, it } from 'vitest';
import { exactJsonBody } from './exact-body.ts';

describe('exactJsonBody', () => {
  it('returns a body without bigints as it is, uncopied', () => {
    const body = { id: 1, name: 'Fern', tags: ['a'], nested: { at: new Date(0) } };
    expect(exactJsonBody(body)).toBe(body);
  });

  it('lets JSON.stringify write every bigint digit for digit, nested or not, leaving the input alone', () => {
    const body = { id: 2n ** 63n - 1n, name: 'Fern', list: [1, -(2n ** 63n)], deep: { id: 9007199254740993n } };
    expect(JSON.stringify(exactJsonBody(body))).toBe(
      '{"id":9223372036854775807,"name":"Fern","list":[1,-9223372036854775808],"deep":{"id":9007199254740993}}',
    );
    expect(body.id).toBe(2n ** 63n - 1n);
  });
});
