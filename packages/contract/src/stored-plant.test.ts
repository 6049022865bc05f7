import { describe, expect, it } from 'vitest';
import { parseExactJson, stringifyExactJson } from './exact-json.ts';
import { parsePlantJson } from './json-text.ts';
import { NewPlant } from './schemas.ts';
import { plantJson, type StoredPlant, samePlant, toStoredPlant, withoutId } from './stored-plant.ts';

const plants: StoredPlant[] = [
  { id: 1n, name: 'Monstera' },
  { id: 9007199254740993n, name: 'Fern', tag: 'shade' },
  { id: -(2n ** 63n), name: 'Say "hi" \\ 🌿', tag: 'été' },
];

describe('the stored plant', () => {
  it.each(plants)('writes plant %# as the exact JSON of its fields in the schema order, and reads it back', (plant) => {
    const text = plantJson(plant);
    expect(text).toBe(stringifyExactJson({ id: plant.id, name: plant.name, tag: plant.tag }));
    expect(parsePlantJson(text)).toStrictEqual(plant);
    expect(NewPlant.safeParse(parseExactJson(text)).success).toBe(true);
  });

  it('writes the schema order whatever order the object has, and leaves out what is undefined', () => {
    expect(plantJson({ tag: 'a', name: 'b', id: 2n } as StoredPlant)).toBe('{"id":2,"name":"b","tag":"a"}');
    expect(plantJson({ id: 2n, name: 'b', tag: undefined } as unknown as StoredPlant)).toBe('{"id":2,"name":"b"}');
  });

  it('keeps every field of a creation and answers it without the id', () => {
    const stored = toStoredPlant({ id: 12, name: 'Ivy', tag: 'climber' });
    expect(stored).toStrictEqual({ id: 12n, name: 'Ivy', tag: 'climber' });
    expect(withoutId(stored)).toStrictEqual({ name: 'Ivy', tag: 'climber' });
  });

  it('tells a replay from a conflict by every field', () => {
    expect(samePlant({ id: 1n, name: 'A' }, { id: 1n, name: 'A' })).toBe(true);
    expect(samePlant({ id: 1n, name: 'A' }, { id: 1n, name: 'A', tag: 'x' })).toBe(false);
    expect(samePlant({ id: 1n, name: 'A', tag: 'x' }, { id: 1n, name: 'A', tag: 'y' })).toBe(false);
    expect(samePlant({ id: 1n, name: 'A' }, { id: 2n, name: 'A' })).toBe(false);
  });
});
