import { describe, expect, it } from 'vitest';
import { BoundedMap } from './bounded-map.ts';

describe('BoundedMap', () => {
  it('keeps up to its bound', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect([map.get('a'), map.get('b')]).toEqual([1, 2]);
  });

  it('is emptied when a new key finds it full', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('c', 3);
    expect([map.get('a'), map.get('b'), map.get('c')]).toEqual([undefined, undefined, 3]);
  });

  it('replaces a key it holds without emptying', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    map.set('b', 20);
    expect([map.get('a'), map.get('b')]).toEqual([1, 20]);
  });
});
