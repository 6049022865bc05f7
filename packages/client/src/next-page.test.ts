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

  it('reads rel however it is spaced, cased or placed among other parameters', () => {
    expect(nextPageQuery('<?after=1> ;  REL = "Next" ; title="more"')).toStrictEqual({ after: '1' });
    expect(nextPageQuery('<?after=2>;rel=next;title=more')).toStrictEqual({ after: '2' });
    expect(nextPageQuery('<?after=3>; rel="next prefetch"')).toStrictEqual({ after: '3' });
    expect(nextPageQuery('<?after=4>; rel="prefetch next last"')).toStrictEqual({ after: '4' });
    expect(nextPageQuery('<?after=5>; rel=next ')).toStrictEqual({ after: '5' });
  });

  it('reads nothing but rel, and next only as a whole word', () => {
    expect(nextPageQuery('<?after=1>; title="next"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; xrel="next"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="prev"; title="next"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="prenext"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="next-page"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="prefetch-next"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="next"x')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel=nextx')).toBeUndefined();
    expect(nextPageQuery('<?after=1> rel="next"')).toBeUndefined();
  });

  it('picks the next link among several', () => {
    expect(nextPageQuery('<?after=1>; rel="prev", <?after=9>; rel="next"')).toStrictEqual({ after: '9' });
    expect(nextPageQuery('<?after=9>; rel="next", <?after=1>; rel="prev"')).toStrictEqual({ after: '9' });
    expect(nextPageQuery('<?after=1>; rel="prev",<?after=9>;rel=next')).toStrictEqual({ after: '9' });
  });

  it('answers undefined on the last page', () => {
    expect(nextPageQuery(null)).toBeUndefined();
    expect(nextPageQuery('')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="prev"')).toBeUndefined();
    expect(nextPageQuery('<?after=1>; rel="nextish"')).toBeUndefined();
  });
});
