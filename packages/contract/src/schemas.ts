import { z } from 'zod';
import { maxCharacters } from './characters.ts';
import { Int64 } from './int64.ts';

/** Longest accepted `name` and `tag`, in characters (Unicode code points, as JSON Schema counts them). */
export const NAME_MAX_LENGTH = 200;
export const TAG_MAX_LENGTH = 100;

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;
/** No code point in the surrogate category: in `u` mode only a lone surrogate is one. */
const WELL_FORMED = /^\P{Cs}*$/u;

// Regex checks rather than refinements: a zod 3 refinement costs twenty times a regex check, and
// both rules end up in the OpenAPI document as patterns.
const text = (description: string, max: number) =>
  maxCharacters(
    z.string({ required_error: 'is required', invalid_type_error: 'must be a string' }).min(1, `must not be empty`),
    max,
  )
    // A lone surrogate cannot be stored as UTF-8: it would come back as U+FFFD, a different name.
    .regex(WELL_FORMED, 'must be valid Unicode text (no lone surrogates)')
    // Control characters (NUL, newlines, escape codes…) have no place in a name and break logs and terminals.
    .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters')
    .describe(description);

const plantShape = {
  name: text('The name of the plant', NAME_MAX_LENGTH),
  tag: text('Tag that specifies the type of the plant', TAG_MAX_LENGTH).optional(),
};

const objectMessages = { invalid_type_error: 'must be a JSON object', required_error: 'is required' };

/** A plant as the service answers it. */
export const Plant = z.object(plantShape, objectMessages);
export type Plant = z.infer<typeof Plant>;

/** The request body of creation: a Plant plus the client-chosen int64 `id`. */
export const NewPlant = z.object(
  {
    id: Int64.describe('Identification number of the plant'),
    ...plantShape,
  },
  objectMessages,
);
export type NewPlant = z.infer<typeof NewPlant>;

/** A stored plant as reading answers it: id, name and tag. */
export const PlantWithId = z.object({
  id: Int64.describe('Identification number of the plant'),
  ...plantShape,
});
export type PlantWithId = z.infer<typeof PlantWithId>;

/**
 * The body of every failure. OpenAPI names it `Error`; in TypeScript it is `ApiError`
 * so that it never shadows the global `Error`.
 */
export const ApiError = z.object({
  error: z.number().int().describe('Numeric error code: the HTTP status of the response'),
  message: z.string().describe('Error message text naming the field or cause'),
});
export type ApiError = z.infer<typeof ApiError>;
