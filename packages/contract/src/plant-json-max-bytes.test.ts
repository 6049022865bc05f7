import { describe, expect, it } from 'vitest';
import { parseExactJson } from './exact-json.ts';
import { NAME_MAX_LENGTH, NewPlant, TAG_MAX_LENGTH } from './schemas.ts';
import { PLANT_JSON_MAX_BYTES, plantJson, type StoredPlant } from './stored-plant.ts';

describe('PLANT_JSON_MAX_BYTES', () => {
  it('holds the heaviest plant the schema allows, exactly: the bound is reached', () => {
    // Four UTF-8 bytes a character in every field, and the longest id.
    const heaviest: StoredPlant = {
      id: -(2n ** 63n),
      name: '🌿'.repeat(NAME_MAX_LENGTH),
      tag: '🌵'.repeat(TAG_MAX_LENGTH),
    };
    expect(NewPlant.safeParse(parseExactJson(plantJson(heaviest))).success).toBe(true);
    expect(Buffer.byteLength(plantJson(heaviest))).toBe(PLANT_JSON_MAX_BYTES);
    // Escaped quotes weigh two bytes a character: under four.
    const quoted: StoredPlant = { id: 1n, name: '"'.repeat(NAME_MAX_LENGTH), tag: '"'.repeat(TAG_MAX_LENGTH) };
    expect(Buffer.byteLength(plantJson(quoted))).toBeLessThan(PLANT_JSON_MAX_BYTES);
  });
});
