import { describe, expect, it } from 'vitest';
import { nextPageQuery } from './next-page.ts';

describe('nextPageQuery', () => {
  it('reads the query of a relative next link, as the API sends it', () => {
    expect(nextPageQuery('<?limit=2&after=9007199254740993&tag=a%20b>; rel="next"')).toStrictEqual({
      limit: '2',
      after: '9007199254740993',
      tag: 'a b',
    });
  });

  it('reads absolute targets, unquoted rel values, and rel lists', () => {
    expect(nextPageQuery('<https://api.example.com/plants?after=5>; rel=next')).toStrictEqual({ after: '5' });
    expect(nextPageQuery('</plants?after=6>; title="more"; rel="prefetch next"')).toStrictEqual({ after: '6' });
  });

  it('picks the next link among several', () => {
    expect(nextPageQuery('<?after=1>; rel="prev", <?after=9>; rel="next"')).toStrictEqual({ after: '9' });
  });

  it('answers undefined on the last page', () => {
    expect(nextPageQuery(null)).toBeUndefined();
    expect(nextPageQuery('')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="prev"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="nextish"')).toBeUndefined();
  });
});
