import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  exactJsonReplacer,
  hasOnlyExactNumbers,
  parseExactJson,
  parseExactJsonFromMarkedText,
  restoreExactIntegers,
  stringifyExactJson,
} from './exact-json.ts';

describe.each([
  ['parseExactJson', parseExactJson],
  ['parseExactJson without source text (Node 20)', parseExactJsonFromMarkedText],
])('%s', (_, parseExactJson) => {
  it('keeps integers beyond 2^53 apart as exact bigints', () => {
    const low = parseExactJson('9007199254740992');
    const high = parseExactJson('9007199254740993');
    expect(low).toBe(9007199254740992n);
    expect(high).toBe(9007199254740993n);
    expect(low).not.toBe(high);
  });

  it('keeps safe integers as numbers', () => {
    expect(parseExactJson('0')).toBe(0);
    expect(parseExactJson('42')).toBe(42);
    expect(parseExactJson('9007199254740991')).toBe(9007199254740991);
    expect(parseExactJson('-9007199254740991')).toBe(-9007199254740991);
  });

  it('reads the int64 bounds exactly', () => {
    expect(parseExactJson('-9223372036854775808')).toBe(-9223372036854775808n);
    expect(parseExactJson('9223372036854775807')).toBe(9223372036854775807n);
  });

  it.each([
    ['1.0', 1],
    ['2.5e1', 25],
    ['1e3', 1000],
    ['-2.5E+1', -25],
    ['0.0', 0],
    ['9007199254740993.0', 9007199254740993n],
    ['9.223372036854775807e18', 9223372036854775807n],
    // An explicit exponent sign, a negative exponent, and zeros before the digits that count:
    // the value is the integer all the same, and beyond 2^53 it needs every digit.
    ['9.007199254740993e+15', 9007199254740993n],
    ['90071992547409930e-1', 9007199254740993n],
    ['0.000009007199254740993e21', 9007199254740993n],
  ])('reads %s as the exact integer %s', (text, expected) => {
    expect(parseExactJson(text)).toBe(expected);
  });

  it('reads a negative zero as JSON.parse does, however it is written', () => {
    for (const zero of ['-0', '-0.0', '-0e5', '-0.00E-3']) {
      expect(parseExactJson(`[${zero},1.5]`), zero).toStrictEqual([-0, 1.5]);
    }
    expect(parseExactJson('[0.0,1.5]')).toStrictEqual([0, 1.5]);
  });

  it('keeps fractions as they are', () => {
    expect(parseExactJson('1.5')).toBe(1.5);
    expect(parseExactJson('-0.25')).toBe(-0.25);
  });

  it('turns a fraction that a double would round to an integer into NaN', () => {
    expect(parseExactJson('1.00000000000000001')).toBeNaN();
    expect(parseExactJson('9007199254740993.5')).toBeNaN();
  });

  it('leaves numbers too large for any int64 as JSON.parse reads them', () => {
    expect(parseExactJson('1e400')).toBe(Number.POSITIVE_INFINITY);
    expect(parseExactJson('-1e400')).toBe(Number.NEGATIVE_INFINITY);
    // Integers of 20 digits or more: beyond int64 too, so they stay the doubles JSON.parse gives.
    expect(parseExactJson('[12345678901234567890,1.5]')).toStrictEqual([Number('12345678901234567890'), 1.5]);
    expect(parseExactJson('-123456789012345678901234')).toBe(Number('-123456789012345678901234'));
  });

  it('handles numbers inside objects and arrays', () => {
    expect(
      parseExactJson('{"id":9007199254740993,"name":"Fern","tags":[1,9223372036854775807,{"n":1.0}],"ok":true}'),
    ).toEqual({ id: 9007199254740993n, name: 'Fern', tags: [1, 9223372036854775807n, { n: 1 }], ok: true });
  });

  it('leaves strings made of digits untouched', () => {
    expect(parseExactJson('{"id":"9007199254740993","n":"1.0","e":"1e3"}')).toEqual({
      id: '9007199254740993',
      n: '1.0',
      e: '1e3',
    });
  });

  it.each(['{"id":', '{1:2}', '{"a":1 2}', '01', '1.', '.5', '+1', '-', '"unterminated 12', '[1,]', 'NaN'])(
    'rejects %s, which is not JSON',
    (text) => {
      expect(() => parseExactJson(text)).toThrow(SyntaxError);
    },
  );

  it('keeps strings with escaped quotes and digits intact', () => {
    expect(parseExactJson('{"a\\"1":"x\\"9007199254740993\\\\","b":[-0.5,1e2]}')).toEqual({
      'a"1': 'x"9007199254740993\\',
      b: [-0.5, 100],
    });
  });
});

describe('parseExactJson without source text (Node 20)', () => {
  it('names the number found where a key belongs, as JSON.parse would', () => {
    expect(() => parseExactJsonFromMarkedText('{12:2}')).toThrow(/^Unexpected number in JSON: 12$/);
  });
});

describe('stringifyExactJson', () => {
  it('writes bigints digit for digit', () => {
    expect(stringifyExactJson({ id: 9007199254740993n, name: 'Fern' })).toBe('{"id":9007199254740993,"name":"Fern"}');
    expect(stringifyExactJson([-9223372036854775808n, 9223372036854775807n])).toBe(
      '[-9223372036854775808,9223372036854775807]',
    );
  });

  it('writes everything else as JSON.stringify does', () => {
    const value = { a: 1, b: 'x', c: [true, null], d: { e: 2.5 } };
    expect(stringifyExactJson(value)).toBe(JSON.stringify(value));
  });

  it('round-trips through parseExactJson', () => {
    const value = { id: 9223372036854775807n, min: -9223372036854775808n, safe: 12, name: '9007199254740993' };
    expect(parseExactJson(stringifyExactJson(value))).toEqual(value);
  });
});

describe('without JSON.rawJSON (Node 20, older browsers)', () => {
  const json = JSON as { rawJSON?: unknown };
  const original = json.rawJSON;

  afterEach(() => {
    json.rawJSON = original;
    vi.resetModules();
  });

  const importWithoutRawJson = async () => {
    delete json.rawJSON;
    vi.resetModules();
    return import('./exact-json.ts');
  };

  it('runs on a runtime that has JSON.rawJSON', () => {
    expect(typeof original).toBe('function');
  });

  it('writes a marker that restoreExactIntegers turns into the same text as rawJSON', async () => {
    const value = { id: 9007199254740993n, ids: [-9223372036854775808n, 7n], name: 'Fern' };
    const expected = JSON.stringify(value, exactJsonReplacer);
    expect(expected).toBe('{"id":9007199254740993,"ids":[-9223372036854775808,7],"name":"Fern"}');

    const fallback = await importWithoutRawJson();
    const marked = JSON.stringify(value, fallback.exactJsonReplacer);
    expect(marked).not.toBe(expected);
    expect(marked).toContain('9007199254740993"');
    expect(fallback.restoreExactIntegers(marked)).toBe(expected);
    expect(fallback.stringifyExactJson(value)).toBe(expected);
  });

  it('leaves ordinary strings alone when restoring', async () => {
    const fallback = await importWithoutRawJson();
    const text = '{"name":"__exact_json_bigint_x:1","id":"9007199254740993"}';
    expect(fallback.restoreExactIntegers(text)).toBe(text);
  });

  it('gives JSON.rawJSON back, so a fresh import uses it again', async () => {
    expect(json.rawJSON).toBe(original);
    vi.resetModules();
    const fresh = await import('./exact-json.ts');
    const raw = fresh.exactJsonReplacer('id', 9007199254740993n);
    expect((JSON as { isRawJSON?: (value: unknown) => boolean }).isRawJSON?.(raw)).toBe(true);
    expect(restoreExactIntegers('{"id":"1"}')).toBe('{"id":"1"}');
  });
});

describe('parseExactJson without a risky number', () => {
  it('parses plain text the fast way with the same result', () => {
    expect(parseExactJson('{"id":999999999999999,"name":"x9007199254740993","n":-12}')).toStrictEqual({
      id: 999999999999999,
      name: 'x9007199254740993',
      n: -12,
    });
  });

  it('still keeps a big integer exact when a string nearby looks like a fraction', () => {
    expect(parseExactJson('{"name":"v1.5","id":9007199254740993}')).toStrictEqual({
      name: 'v1.5',
      id: 9007199254740993n,
    });
  });
});

describe('hasOnlyExactNumbers', () => {
  it.each([
    ['{"id":999999999999999,"name":"Fern"}', true],
    ['{"id":-42,"tag":"x"}', true],
    ['{"id":9007199254740993}', false],
    ['{"id":1.5}', false],
    ['{"id":1e3}', false],
    ['{"id":1E3}', false],
    // A string that looks like a fraction is only a false alarm: the exact parse gives the same.
    ['{"name":"v1.5"}', false],
  ])('%s → %s', (text, expected) => {
    expect(hasOnlyExactNumbers(text)).toBe(expected);
    if (expected) expect(parseExactJson(text)).toStrictEqual(JSON.parse(text));
  });
});
