/**
 * A plant as the service and its fake keep it, derived from the schema: a field added to `Plant`
 * is a field of StoredPlant, of its JSON text and of its comparison, with nothing else to change.
 */
import { ZodOptional, ZodString, type ZodTypeAny } from 'zod';
import { characterLimitOf } from './characters.ts';
import { type NewPlant, Plant } from './schemas.ts';

/** NewPlant with its id always a bigint, so that every int64 is exact. */
export type StoredPlant = Omit<NewPlant, 'id'> & { id: bigint };

/** The fields besides the id, in the schema's order: the order of every plant's JSON text. */
const FIELDS = Object.keys(Plant.shape) as (keyof Plant)[];

/** The stored plant of a creation's body (an id that a number holds exactly, or a bigint). */
export const toStoredPlant = (plant: NewPlant): StoredPlant => ({ ...plant, id: BigInt(plant.id) });

/** The contract's Plant: the stored plant without its id (creation answers it so). */
export const withoutId = ({ id: _id, ...plant }: StoredPlant): Plant => plant;

/**
 * The plant as JSON text, exactly: the id's digits, then the fields in the schema's order, those
 * left out omitted. What stores keep and events carry, so that it is written once per plant;
 * parsePlantJson (json-text.ts) reads it back.
 * Built by hand rather than by a replacer: one JSON.stringify per field, and no bigint marker.
 */
export const plantJson = (plant: StoredPlant): string => {
  let text = `{"id":${plant.id}`;
  for (const field of FIELDS) {
    const value = plant[field];
    if (value !== undefined) text += `,"${field}":${JSON.stringify(value)}`;
  }
  return `${text}}`;
};

/** Whether two plants hold the same data: a replay rather than a conflict. */
export const samePlant = (a: StoredPlant, b: StoredPlant): boolean => plantJson(a) === plantJson(b);

/**
 * The most UTF-8 bytes a field's JSON can take: a string bounded by `maxCharacters` (each character
 * at most four bytes, an escaped quote two), and its quotes. A field with no such bound throws, so
 * a new field cannot leave the stores' byte budgets (PLANT_JSON_MAX_BYTES) silently too small.
 */
const jsonMaxBytes = (field: string, schema: ZodTypeAny): number => {
  const inner = schema instanceof ZodOptional ? schema.unwrap() : schema;
  const limit =
    inner instanceof ZodString
      ? inner._def.checks.reduce<number | undefined>(
          (found, check) => found ?? (check.kind === 'regex' ? characterLimitOf(check.regex) : undefined),
          undefined,
        )
      : undefined;
  if (limit === undefined)
    throw new TypeError(`Plant.${field} has no bound on its JSON's bytes: teach jsonMaxBytes it.`);
  return 4 * limit + 2;
};

/**
 * The most bytes a plant's JSON text (plantJson) takes, from the schema's bounds: the id's
 * `{"id":-9223372036854775808`, each field's key and heaviest value, and the closing brace.
 */
export const PLANT_JSON_MAX_BYTES = FIELDS.reduce(
  (bytes, field) => bytes + `,"${field}":`.length + jsonMaxBytes(field, Plant.shape[field]),
  '{"id":-9223372036854775808}'.length,
);
