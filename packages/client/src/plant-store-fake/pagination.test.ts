import { LIST_PAGE_MAX_BYTES, plantJson, type StoredPlant } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';
import { pageOf } from './pagination.ts';

describe('pageOf', () => {
  it('ends a page once its plants’ JSON reaches LIST_PAGE_MAX_BYTES, tags counted, and not a byte before', () => {
    const quarter = LIST_PAGE_MAX_BYTES / 4;
    // {"id":1,"name":"…","tag":"…"} is 27 bytes besides the name and the tag: each plant weighs a quarter.
    const plants: StoredPlant[] = [1n, 2n, 3n, 4n, 5n].map((id) => ({
      id,
      name: 'n'.repeat(quarter / 2 - 27),
      tag: 't'.repeat(quarter / 2),
    }));
    expect(plantJson(plants[0] as StoredPlant)).toHaveLength(quarter);
    expect(pageOf(plants, { limit: 10 })).toStrictEqual({ items: plants.slice(0, 4), nextAfter: 4n });
    // One byte short of the budget after four: the fifth still fits.
    const lighter: StoredPlant[] = [
      { ...plants[0], tag: 't'.repeat(quarter / 2 - 1) } as StoredPlant,
      ...plants.slice(1),
    ];
    expect(pageOf(lighter, { limit: 10 })).toStrictEqual({ items: lighter });
  });

  it('counts UTF-8 bytes, not characters', () => {
    const plants: StoredPlant[] = [1n, 2n, 3n].map((id) => ({ id, name: 'é'.repeat(LIST_PAGE_MAX_BYTES / 4) }));
    // Two bytes a character: two plants fill the page.
    expect(pageOf(plants, { limit: 10 })).toStrictEqual({ items: plants.slice(0, 2), nextAfter: 2n });
  });
});
