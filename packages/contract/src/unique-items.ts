import type { ZodArray, ZodEffects, ZodTypeAny } from 'zod';

/** The refinements made by `uniqueItems`: the OpenAPI generator writes them as `uniqueItems: true`. */
const marked = new WeakSet<object>();

/**
 * Refuses an array that holds an item twice (items compared with `===`). zod has no such check of
 * its own, only a refinement, which the document cannot read: this one is marked, so the document
 * says `uniqueItems: true` and a client that validates by it never sends what the service refuses.
 */
export const uniqueItems = <T extends ZodArray<ZodTypeAny>>(schema: T, message: string): ZodEffects<T> => {
  const refined = schema.refine((items: unknown[]) => new Set(items).size === items.length, message);
  // `.describe()` and `.optional()` copy the schema but keep this effect object.
  marked.add(refined._def.effect);
  return refined;
};

/** Whether a ZodEffects's effect is one `uniqueItems` made. */
export const isUniqueItems = (effect: unknown): boolean =>
  typeof effect === 'object' && effect !== null && marked.has(effect);
