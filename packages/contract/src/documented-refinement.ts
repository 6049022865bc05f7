import type { ZodArray, ZodEffects, ZodObject, ZodRawShape, ZodTypeAny, z } from 'zod';
import { andList } from './prose.ts';

/** JSON Schema keywords that say what a refinement refuses. */
export type SaidAs = { readonly [keyword: string]: unknown };

/** The refinements made here, with what the OpenAPI generator writes for each. */
const said = new WeakMap<object, SaidAs>();

/**
 * Refuses what `problem` names (a sentence, or undefined to accept), and records the JSON Schema
 * keywords that say the same, which the document then carries. A plain zod refinement is invisible
 * to the document: a client that validates by it would send what the service refuses.
 */
export const refineDocumented = <T extends ZodTypeAny>(
  schema: T,
  problem: (value: z.output<T>) => string | undefined,
  saidAs: SaidAs,
): ZodEffects<T> => {
  const refined = schema.superRefine((value, context) => {
    const message = problem(value);
    if (message !== undefined) context.addIssue({ code: 'custom', message });
  });
  // `.describe()` and `.optional()` copy the schema but keep this effect object.
  said.set(refined._def.effect, saidAs);
  return refined;
};

/** The keywords a ZodEffects's effect was documented with by `refineDocumented`, if it was. */
export const saidAsOf = (effect: unknown): SaidAs | undefined =>
  typeof effect === 'object' && effect !== null ? said.get(effect) : undefined;

/** Refuses an array that holds an item twice (compared with `===`): `uniqueItems: true`. */
export const uniqueItems = <T extends ZodArray<ZodTypeAny>>(schema: T, message: string): ZodEffects<T> =>
  refineDocumented(schema, (items: unknown[]) => (new Set(items).size === items.length ? undefined : message), {
    uniqueItems: true,
  });

/** Refuses an object without any of its own properties: an `anyOf` of each one `required`. */
export const atLeastOneProperty = <T extends ZodObject<ZodRawShape>>(schema: T): ZodEffects<T> => {
  const keys = Object.keys(schema.shape);
  const message = `must have at least one of ${andList(keys)}`;
  return refineDocumented(
    schema,
    (value: Record<string, unknown>) => (keys.some((key) => value[key] !== undefined) ? undefined : message),
    // Each alternative names the property it requires, as Ajv's strict mode asks of a `required`.
    { anyOf: keys.map((key) => ({ properties: { [key]: true }, required: [key] })) },
  );
};
