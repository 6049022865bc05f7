import { exactJsonReplacer } from '@org/plant-contract';

const isPlainObject = (value: object): value is Record<string, unknown> => {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/**
 * `value` as JSON.stringify can write it digit for digit: every bigint in it (ids beyond 2^53)
 * replaced by `exactJsonReplacer`'s stand-in — `JSON.rawJSON` text, or where that is missing a
 * marker that `restoreExactIntegers` turns back into the digits once the text is written. ts-rest
 * serialises request bodies with a plain JSON.stringify, which throws on a bigint. Values without
 * a bigint are returned as they are, copied nowhere.
 */
export const exactJsonBody = (value: unknown): unknown => {
  if (typeof value === 'bigint') return exactJsonReplacer('', value);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const exact = exactJsonBody(item);
      if (exact === item) continue;
      copy ??= [...value];
      copy[index] = exact;
    }
    return copy ?? value;
  }
  // Dates, class instances and the like keep their own JSON (toJSON).
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = value[key];
    const exact = exactJsonBody(item);
    if (exact === item) continue;
    copy ??= { ...value };
    copy[key] = exact;
  }
  return copy ?? value;
};
