import { describe, expect, it } from 'vitest';
import { contract } from './contract.ts';
import { ApiError, NAME_MAX_LENGTH, NewPlant, Plant, TAG_MAX_LENGTH } from './schemas.ts';

const RANGE = 'must be an integer from -9223372036854775808 to 9223372036854775807';
const UNSAFE = 'must be a bigint when beyond ±(2^53 − 1), so that it stays exact';

/** The issues a schema reports, as the API would name them: field path and message. */
const issues = (schema: { safeParse: (value: unknown) => { error?: { issues: Issue[] } } }, value: unknown) =>
  (schema.safeParse(value).error?.issues ?? []).map(({ path, message }) => ({ path: path.join('.'), message }));
type Issue = { path: (string | number)[]; message: string };

describe('NewPlant', () => {
  it.each([
    ['with a tag', { id: 1, name: 'Fern', tag: 'fern' }],
    ['without a tag', { id: 0, name: 'Fern' }],
    ['with the largest safe number id', { id: Number.MAX_SAFE_INTEGER, name: 'Fern' }],
    ['with the smallest safe number id', { id: Number.MIN_SAFE_INTEGER, name: 'Fern' }],
    ['with the int64 maximum as bigint', { id: 2n ** 63n - 1n, name: 'Fern' }],
    ['with the int64 minimum as bigint', { id: -(2n ** 63n), name: 'Fern' }],
    [
      'with a name and tag at their maximum lengths',
      { id: 1, name: 'n'.repeat(NAME_MAX_LENGTH), tag: 't'.repeat(TAG_MAX_LENGTH) },
    ],
    // Characters are code points, as maxLength counts them: an emoji is one, not two UTF-16 units.
    [
      'with a name and tag of astral characters at their maximum lengths',
      { id: 1, name: '🌵'.repeat(NAME_MAX_LENGTH), tag: '🌿'.repeat(TAG_MAX_LENGTH) },
    ],
  ])('accepts a body %s, unchanged', (_, body) => {
    expect(NewPlant.parse(body)).toStrictEqual(body);
  });

  it('strips unknown fields', () => {
    expect(NewPlant.parse({ id: 7n, name: 'Fern', colour: 'green', extra: { a: 1 } })).toStrictEqual({
      id: 7n,
      name: 'Fern',
    });
  });

  it.each([
    ['name is missing', { id: 1 }, 'name', 'is required'],
    ['name is a number', { id: 1, name: 5 }, 'name', 'must be a string'],
    ['name is null', { id: 1, name: null }, 'name', 'must be a string'],
    ['name is empty', { id: 1, name: '' }, 'name', 'must not be empty'],
    ['name is too long', { id: 1, name: 'n'.repeat(NAME_MAX_LENGTH + 1) }, 'name', 'must be at most 200 characters'],
    [
      'tag is too long',
      { id: 1, name: 'Fern', tag: 't'.repeat(TAG_MAX_LENGTH + 1) },
      'tag',
      'must be at most 100 characters',
    ],
    [
      'name is one astral character too long',
      { id: 1, name: '🌵'.repeat(NAME_MAX_LENGTH + 1) },
      'name',
      'must be at most 200 characters',
    ],
    [
      'tag is one astral character too long',
      { id: 1, name: 'Fern', tag: `${'🌿'.repeat(TAG_MAX_LENGTH - 1)}ab` },
      'tag',
      'must be at most 100 characters',
    ],
    ['tag is empty', { id: 1, name: 'Fern', tag: '' }, 'tag', 'must not be empty'],
    [
      'name has a lone surrogate',
      { id: 1, name: 'Fern\uD83C' },
      'name',
      'must be valid Unicode text (no lone surrogates)',
    ],
    ['name has a newline', { id: 1, name: 'Fe\nrn' }, 'name', 'must not contain control characters'],
    [
      'tag has an escape code',
      { id: 1, name: 'Fern', tag: '\u001b[31m' },
      'tag',
      'must not contain control characters',
    ],
    ['tag is null', { id: 1, name: 'Fern', tag: null }, 'tag', 'must be a string'],
    ['id is not an integer', { id: 1.5, name: 'Fern' }, 'id', RANGE],
    ['id is NaN (a fraction parseExactJson refused to round)', { id: Number.NaN, name: 'Fern' }, 'id', RANGE],
    ['id is a string of digits', { id: '1', name: 'Fern' }, 'id', RANGE],
    ['id is missing', { name: 'Fern' }, 'id', 'is required'],
    ['id is 2^63 as a bigint', { id: 2n ** 63n, name: 'Fern' }, 'id', RANGE],
    ['id is below -2^63 as a bigint', { id: -(2n ** 63n) - 1n, name: 'Fern' }, 'id', RANGE],
    ['id is beyond int64 as a number', { id: 2 ** 64, name: 'Fern' }, 'id', RANGE],
    ['id is an unsafe number', { id: 2 ** 60, name: 'Fern' }, 'id', UNSAFE],
    ['id is an unsafe negative number', { id: -(2 ** 60), name: 'Fern' }, 'id', UNSAFE],
    ['id is just past the safe range', { id: Number.MAX_SAFE_INTEGER + 1, name: 'Fern' }, 'id', UNSAFE],
  ])('rejects a body where %s', (_, body, path, message) => {
    expect(issues(NewPlant, body)).toEqual([{ path, message }]);
  });

  it('rejects a body where id is Infinity (as JSON.parse reads 1e999), with the range sentence only', () => {
    const found = issues(NewPlant, { id: Number.POSITIVE_INFINITY, name: 'Fern' });
    expect(found.length).toBeGreaterThan(0);
    expect(new Set(found.map(({ path, message }) => `${path} ${message}`))).toEqual(new Set([`id ${RANGE}`]));
  });

  it('names every bad field at once', () => {
    expect(issues(NewPlant, { id: 'x', name: '', tag: 3 })).toEqual([
      { path: 'id', message: RANGE },
      { path: 'name', message: 'must not be empty' },
      { path: 'tag', message: 'must be a string' },
    ]);
  });

  it.each([
    ['an array', []],
    ['null', null],
    ['a string', 'Fern'],
    ['a number', 1],
  ])('rejects %s at the top level as not a JSON object', (_, body) => {
    expect(issues(NewPlant, body)).toEqual([{ path: '', message: 'must be a JSON object' }]);
  });

  it('says a missing body is required', () => {
    expect(issues(NewPlant, undefined)).toEqual([{ path: '', message: 'is required' }]);
  });

  it('keeps the documented limits', () => {
    expect(NAME_MAX_LENGTH).toBe(200);
    expect(TAG_MAX_LENGTH).toBe(100);
  });
});

describe('Plant', () => {
  it('is name and optional tag, without the id', () => {
    expect(Plant.parse({ name: 'Fern', tag: 'fern' })).toStrictEqual({ name: 'Fern', tag: 'fern' });
    expect(Plant.parse({ id: 1, name: 'Fern' })).toStrictEqual({ name: 'Fern' });
  });

  it('uses the same rules as NewPlant', () => {
    expect(issues(Plant, { tag: 'fern' })).toEqual([{ path: 'name', message: 'is required' }]);
    expect(issues(Plant, { name: 'Fern', tag: '' })).toEqual([{ path: 'tag', message: 'must not be empty' }]);
    expect(issues(Plant, 'Fern')).toEqual([{ path: '', message: 'must be a JSON object' }]);
  });
});

describe('ApiError', () => {
  it('is an integer error code and a message', () => {
    expect(ApiError.parse({ error: 409, message: 'taken', extra: true })).toStrictEqual({
      error: 409,
      message: 'taken',
    });
  });

  it.each([
    ['a missing message', { error: 400 }],
    ['a missing code', { message: 'bad' }],
    ['a fractional code', { error: 400.5, message: 'bad' }],
    ['a string code', { error: '400', message: 'bad' }],
  ])('rejects %s', (_, body) => {
    expect(ApiError.safeParse(body).success).toBe(false);
  });
});

describe('contract.createPlant', () => {
  const route = contract.createPlant;

  it('is POST /plants with a NewPlant body', () => {
    expect(route.method).toBe('POST');
    expect(route.path).toBe('/plants');
    expect(route.body).toBe(NewPlant);
    expect(route.summary).toBeTruthy();
  });

  it('declares every status the service answers, with ApiError for every failure', () => {
    expect(Object.keys(route.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '408',
      '409',
      '413',
      '415',
      '429',
      '431',
      '500',
      '503',
    ]);
    expect(route.responses[200]).toBe(Plant);
    for (const [status, schema] of Object.entries(route.responses)) {
      if (status !== '200') expect(schema, `response ${status}`).toBe(ApiError);
    }
  });

  it('answers only the declared statuses', () => {
    expect(route.strictStatusCodes).toBe(true);
  });
});
