import { describe, expect, it } from 'vitest';
import { INT64_MAX, INT64_MIN } from './int64.ts';
import { Int64Text, LIST_LIMIT_MAX, ListPlantsQuery } from './parameters.ts';

const RANGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
const messageOf = (result: { success: boolean; error?: { issues: { message: string }[] } }) =>
  result.error?.issues.map((issue) => issue.message);

describe('Int64Text (ids in paths and cursors)', () => {
  it.each([
    ['0', 0n],
    ['12', 12n],
    ['-12', -12n],
    [String(INT64_MIN), INT64_MIN],
    [String(INT64_MAX), INT64_MAX],
  ])('reads %s exactly as a bigint', (text, value) => {
    expect(Int64Text.parse(text)).toBe(value);
  });

  it.each([' 12', '12 ', 'a12', '12a', '1e3', '', '-', String(INT64_MAX + 1n), String(INT64_MIN - 1n)])(
    'refuses %j naming the int64 range',
    (text) => {
      expect(messageOf(Int64Text.safeParse(text))).toEqual([RANGE]);
    },
  );

  it('says a parameter must be given once when it comes as a list', () => {
    expect(messageOf(Int64Text.safeParse(['1', '2']))).toEqual(['must be given once']);
  });
});

describe('ListPlantsQuery', () => {
  it.each([
    ['1', 1],
    [String(LIST_LIMIT_MAX), LIST_LIMIT_MAX],
  ])('accepts limit=%s', (limit, value) => {
    expect(ListPlantsQuery.parse({ limit })).toEqual({ limit: value });
  });

  it.each(['0', String(LIST_LIMIT_MAX + 1), ' 5', '5 ', '-1', '2.5'])('refuses limit=%j naming its range', (limit) => {
    expect(messageOf(ListPlantsQuery.safeParse({ limit }))).toEqual([`must be an integer from 1 to ${LIST_LIMIT_MAX}`]);
  });

  it('refuses an empty tag, and takes after as an exact id', () => {
    expect(messageOf(ListPlantsQuery.safeParse({ tag: '' }))).toEqual(['must not be empty']);
    expect(ListPlantsQuery.parse({ after: String(INT64_MAX) })).toEqual({ after: INT64_MAX });
  });
});
