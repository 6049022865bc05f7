import { describe, expect, it } from 'vitest';
import { Refusal } from './answers.ts';
import { matchRoute, parseQuery } from './routes.ts';

describe('parseQuery', () => {
  it('makes a repeated key an array of every value, in order, as Express does', () => {
    expect({ ...parseQuery('?tag=a&limit=1&tag=b&tag=c') }).toStrictEqual({ tag: ['a', 'b', 'c'], limit: '1' });
    expect({ ...parseQuery('?tag=a&tag=b') }).toStrictEqual({ tag: ['a', 'b'] });
  });
});

describe('matchRoute', () => {
  it('refuses a path segment that is not percent-encoding, quoting its first 40 characters', () => {
    const segment = `%zz${'a'.repeat(60)}`;
    let thrown: unknown;
    try {
      matchRoute('GET', `/plants/${segment}`);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Refusal);
    expect(thrown).toMatchObject({
      status: 400,
      message: `The path segment ${JSON.stringify(segment.slice(0, 40))} is not valid percent-encoding.`,
    });
  });
});
