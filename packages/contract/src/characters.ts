import type { ZodString } from 'zod';

/** The regexes made by `maxCharacters`, with their limit: the OpenAPI generator writes them as maxLength. */
const limits = new WeakMap<RegExp, number>();

/**
 * At most `max` characters, counted as JSON Schema's `maxLength` counts them: Unicode code points.
 * zod's `max` counts UTF-16 code units (JavaScript's `length`), which makes an emoji two characters,
 * so a client that validates by the OpenAPI document would send bodies the service refuses. Every
 * length limit of the contract goes through here, so the service, the client and the document
 * count alike.
 */
export const maxCharacters = (schema: ZodString, max: number): ZodString => {
  // In `u` mode `[\s\S]` is one code point; a regex check costs a twentieth of a zod refinement.
  const regex = new RegExp(`^[\\s\\S]{0,${max}}$`, 'u');
  limits.set(regex, max);
  return schema.regex(regex, `must be at most ${max} characters`);
};

/** The limit of a regex made by `maxCharacters`; undefined for any other regex. */
export const characterLimitOf = (regex: RegExp): number | undefined => limits.get(regex);
