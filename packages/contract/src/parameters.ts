import { z } from 'zod';
import { maxCharacters } from './characters.ts';
import { INT64_MAX, INT64_MIN, isInt64 } from './int64.ts';
import { TAG_MAX_LENGTH } from './schemas.ts';

/** Page size of GET /plants when `limit` is not given, and the largest accepted. */
export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;
/**
 * A page of GET /plants ends once its plants hold this many bytes of JSON (UTF-8, each plant's text
 * as plantJson writes it), whatever its `limit`: about 220 plants of the longest names and tags in
 * four-byte characters.
 */
export const LIST_PAGE_MAX_BYTES = 256 * 1024;

const INT64_MESSAGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`;
const once = { invalid_type_error: 'must be given once' };

/** An int64 written in a path or query string, parsed exactly to a bigint. */
export const Int64Text = z
  .string(once)
  .regex(/^-?\d{1,20}$/, INT64_MESSAGE)
  .transform((text) => BigInt(text))
  .refine(isInt64, INT64_MESSAGE);

export const PlantIdParams = z.object({
  id: Int64Text.describe('Identification number of the plant'),
});

const Limit = z
  .string(once)
  .regex(/^\d{1,10}$/, `must be an integer from 1 to ${LIST_LIMIT_MAX}`)
  .transform(Number)
  .refine((limit) => limit >= 1 && limit <= LIST_LIMIT_MAX, `must be an integer from 1 to ${LIST_LIMIT_MAX}`);

export const ListPlantsQuery = z.object({
  limit: Limit.optional().describe(
    `Maximum number of plants to return (int32, 1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT}). A maximum, not a promise: a page may hold fewer, with a next link`,
  ),
  after: Int64Text.optional().describe('Return only plants with a greater id: the cursor of the next page'),
  tag: maxCharacters(z.string(once).min(1, 'must not be empty'), TAG_MAX_LENGTH)
    .optional()
    .describe('Return only plants with exactly this tag'),
});
