import { LIST_PAGE_MAX_BYTES } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';
import { pageOf, type StoredPlant } from './pagination.ts';

describe('pageOf', () => {
  it('ends a page once its names and tags reach LIST_PAGE_MAX_BYTES, tags counted, and not a byte before', () => {
    const quarter = LIST_PAGE_MAX_BYTES / 4;
    // Each weighs a quarter of the budget: half in its name, half in its tag.
    const plants: StoredPlant[] = [1n, 2n, 3n, 4n, 5n].map((id) => ({
      id,
      name: 'n'.repeat(quarter / 2),
      tag: 't'.repeat(quarter / 2),
    }));
    expect(pageOf(plants, { limit: 10 })).toStrictEqual({ items: plants.slice(0, 4), nextAfter: 4n });
    // One byte short of the budget after four: the fifth still fits.
    const lighter: StoredPlant[] = [
      { ...plants[0], tag: 't'.repeat(quarter / 2 - 1) } as StoredPlant,
      ...plants.slice(1),
    ];
    expect(pageOf(lighter, { limit: 10 })).toStrictEqual({ items: lighter });
  });

  it('counts the UTF-8 bytes of a plant without a tag by its name alone', () => {
    const plants: StoredPlant[] = [1n, 2n, 3n].map((id) => ({ id, name: 'é'.repeat(LIST_PAGE_MAX_BYTES / 4) }));
    // Two bytes a character: two plants fill the page.
    expect(pageOf(plants, { limit: 10 })).toStrictEqual({ items: plants.slice(0, 2), nextAfter: 2n });
  });
});
