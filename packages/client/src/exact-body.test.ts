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

  it('writes every bigint of an array or object holding several, copying it and leaving it alone', () => {
    const list = [1n, 'x', 2n, 3n];
    const record = { a: 1n, b: 'x', c: 2n, d: null };
    expect(JSON.stringify(exactJsonBody(list))).toBe('[1,"x",2,3]');
    expect(JSON.stringify(exactJsonBody(record))).toBe('{"a":1,"b":"x","c":2,"d":null}');
    expect(list).toStrictEqual([1n, 'x', 2n, 3n]);
    expect(record).toStrictEqual({ a: 1n, b: 'x', c: 2n, d: null });
  });

  it('writes the bigints of an object without a prototype, and leaves class instances to their toJSON', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { id: 9007199254740993n });
    expect(JSON.stringify(exactJsonBody(bare))).toBe('{"id":9007199254740993}');
    const own = new (class {
      id = 7n;
      toJSON() {
        return `plant ${this.id}`;
      }
    })();
    expect(exactJsonBody(own)).toBe(own);
    expect(JSON.stringify(exactJsonBody({ own }))).toBe('{"own":"plant 7"}');
    expect(exactJsonBody(null)).toBeNull();
  });
});
