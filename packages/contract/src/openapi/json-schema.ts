import type { ZodTypeAny } from 'zod';
import { characterLimitOf } from '../characters.ts';
import { saidAsOf } from '../documented-refinement.ts';

/**
 * A JSON Schema (2020-12) object. Integer bounds may be bigints: they are written digit for digit
 * by `stringifyOpenApiDocument`, because ±2^63 has no exact double.
 */
export type JsonSchema = { [keyword: string]: unknown };

export type JsonSchemaOptions = {
  /** Schemas written as a `$ref` wherever they occur, e.g. `[[Plant, '#/components/schemas/Plant']]`. */
  refs?: ReadonlyArray<readonly [ZodTypeAny, string]>;
  /** JSON Schemas for zod schemas whose wire format zod cannot say, such as int64 or int32. */
  overrides?: ReadonlyArray<readonly [ZodTypeAny, JsonSchema]>;
};

type Def = { typeName?: string; description?: string; [key: string]: unknown };
type Check = { kind: string; value?: unknown; inclusive?: boolean; regex?: RegExp };

const defOf = (schema: ZodTypeAny): Def => schema._def as Def;

/**
 * True when `a` and `b` are the same schema, up to `.describe()`: zod's `describe` returns a copy
 * whose definition differs only in `description`, and the contract describes its shared schemas
 * at each use.
 */
export const sameSchema = (a: ZodTypeAny, b: ZodTypeAny): boolean => {
  if (a === b) return true;
  if (a.constructor !== b.constructor) return false;
  const defA = defOf(a);
  const defB = defOf(b);
  const keys = new Set([...Object.keys(defA), ...Object.keys(defB)]);
  keys.delete('description');
  return [...keys].every((key) => defA[key] === defB[key]);
};

const unsupported = (what: string): never => {
  throw new TypeError(`Cannot express ${what} in JSON Schema; extend packages/contract/src/openapi/json-schema.ts`);
};

const stringChecks = (checks: readonly Check[]): JsonSchema => {
  const out: JsonSchema = {};
  for (const check of checks) {
    switch (check.kind) {
      // zod counts UTF-16 code units, JSON Schema code points. A lower bound of one is the same
      // either way; an upper bound is not (an emoji is two units, one character): maxCharacters says it.
      case 'min':
        if (Number(check.value) > 1) unsupported(`a minimum length above 1 in UTF-16 code units`);
        out.minLength = check.value;
        break;
      case 'max':
      case 'length':
        unsupported(`zod's ${check.kind}, which counts UTF-16 code units: use maxCharacters`);
        break;
      case 'regex': {
        const limit = check.regex && characterLimitOf(check.regex);
        if (limit !== undefined) {
          out.maxLength = limit;
          break;
        }
        if (check.regex?.flags.replace(/[gu]/g, '')) unsupported(`the regex flags of /${check.regex.source}/`);
        // One pattern per schema: each further one is a schema of its own, all of which must hold.
        if (out.pattern === undefined) out.pattern = check.regex?.source;
        else out.allOf = [...((out.allOf as JsonSchema[] | undefined) ?? []), { pattern: check.regex?.source }];
        break;
      }
      case 'email':
        out.format = 'email';
        break;
      case 'url':
        out.format = 'uri';
        break;
      case 'uuid':
        out.format = 'uuid';
        break;
      case 'datetime':
        out.format = 'date-time';
        break;
      // Transforms of the parsed value: the wire accepts any such string.
      case 'trim':
      case 'toLowerCase':
      case 'toUpperCase':
        break;
      default:
        unsupported(`the string check "${check.kind}"`);
    }
  }
  return out;
};

const numberChecks = (checks: readonly Check[], integer: boolean): JsonSchema => {
  const out: JsonSchema = { type: integer ? 'integer' : 'number' };
  for (const check of checks) {
    switch (check.kind) {
      case 'int':
        out.type = 'integer';
        break;
      case 'min':
        out[check.inclusive ? 'minimum' : 'exclusiveMinimum'] = check.value;
        break;
      case 'max':
        out[check.inclusive ? 'maximum' : 'exclusiveMaximum'] = check.value;
        break;
      case 'multipleOf':
        out.multipleOf = check.value;
        break;
      case 'finite':
        break;
      default:
        unsupported(`the number check "${check.kind}"`);
    }
  }
  return out;
};

/**
 * The JSON Schema (2020-12, as OpenAPI 3.1 uses it) of what a zod 3 schema accepts on the wire.
 * Refinements and transforms cannot be said in JSON Schema: their input schema stands for them, so
 * the result may accept more than zod does, never less; a test sends what the document allows and
 * finds no refusal, so the contract says what it refuses in ways the document can carry
 * (`maxCharacters`, `refineDocumented`). A type it cannot express throws, so a new
 * contract construct never turns into a silently wrong document.
 */
export const toJsonSchema = (root: ZodTypeAny, options: JsonSchemaOptions = {}): JsonSchema => {
  const { refs = [], overrides = [] } = options;

  const convert = (schema: ZodTypeAny): JsonSchema => {
    const ref = refs.find(([candidate]) => sameSchema(candidate, schema));
    const override = overrides.find(([candidate]) => sameSchema(candidate, schema));
    const out: JsonSchema = ref ? { $ref: ref[1] } : override ? structuredClone(override[1]) : convertType(schema);
    // The outermost description wins: `.describe()` on a wrapper speaks of the whole.
    const { description } = defOf(schema);
    if (description === undefined) return out;
    const rest = Object.entries(out).filter(([keyword]) => keyword !== 'description');
    return { description, ...Object.fromEntries(rest) };
  };

  const child = (schema: unknown): JsonSchema => convert(schema as ZodTypeAny);

  const convertType = (schema: ZodTypeAny): JsonSchema => {
    const def = defOf(schema);
    switch (def.typeName) {
      case 'ZodString':
        return { type: 'string', ...stringChecks(def.checks as Check[]) };
      case 'ZodNumber':
        return numberChecks(def.checks as Check[], false);
      case 'ZodBigInt':
        return { ...numberChecks(def.checks as Check[], true), format: 'int64' };
      case 'ZodBoolean':
        return { type: 'boolean' };
      case 'ZodNull':
        return { type: 'null' };
      case 'ZodAny':
      case 'ZodUnknown':
        return {};
      case 'ZodLiteral':
        return { const: def.value };
      case 'ZodEnum':
        return { type: 'string', enum: [...(def.values as string[])] };
      case 'ZodNativeEnum':
        return { enum: [...new Set(Object.values(def.values as object))] };
      case 'ZodObject':
        return convertObject(def);
      case 'ZodArray': {
        const out: JsonSchema = { type: 'array', items: child(def.type) };
        const bound = (key: string) => (def[key] as { value: number } | null)?.value;
        if (bound('exactLength') !== undefined) {
          out.minItems = bound('exactLength');
          out.maxItems = bound('exactLength');
        }
        if (bound('minLength') !== undefined) out.minItems = bound('minLength');
        if (bound('maxLength') !== undefined) out.maxItems = bound('maxLength');
        return out;
      }
      case 'ZodUnion':
      case 'ZodDiscriminatedUnion':
        return { anyOf: [...(def.options as Iterable<ZodTypeAny>)].map(child) };
      case 'ZodIntersection':
        return { allOf: [child(def.left), child(def.right)] };
      case 'ZodRecord':
        return { type: 'object', additionalProperties: child(def.valueType) };
      case 'ZodTuple': {
        const items = (def.items as ZodTypeAny[]).map(child);
        return def.rest
          ? { type: 'array', prefixItems: items, items: child(def.rest), minItems: items.length }
          : { type: 'array', prefixItems: items, items: false, minItems: items.length };
      }
      case 'ZodNullable':
        return { anyOf: [child(def.innerType), { type: 'null' }] };
      case 'ZodOptional':
      case 'ZodReadonly':
      case 'ZodCatch':
        return child(def.innerType);
      case 'ZodDefault':
        return { ...child(def.innerType), default: (def.defaultValue as () => unknown)() };
      case 'ZodBranded':
        return child(def.type);
      case 'ZodEffects': {
        const out = child(def.schema);
        // A keyword the schema has already is one more condition, all of which must hold.
        for (const [keyword, value] of Object.entries(saidAsOf(def.effect) ?? {})) {
          if (out[keyword] === undefined) out[keyword] = value;
          else out.allOf = [...((out.allOf as JsonSchema[] | undefined) ?? []), { [keyword]: value }];
        }
        return out;
      }
      case 'ZodPipeline':
        return child(def.in);
      default:
        return unsupported(`the zod type ${def.typeName ?? '(unknown)'}`);
    }
  };

  const convertObject = (def: Def): JsonSchema => {
    const shape = (def.shape as () => Record<string, ZodTypeAny>)();
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [key, value] of Object.entries(shape)) {
      properties[key] = child(value);
      if (!value.isOptional()) required.push(key);
    }
    const out: JsonSchema = { type: 'object', properties };
    if (required.length > 0) out.required = required;
    const catchall = def.catchall as ZodTypeAny;
    if (defOf(catchall).typeName !== 'ZodNever') out.additionalProperties = child(catchall);
    else if (def.unknownKeys === 'strict') out.additionalProperties = false;
    // 'strip' and 'passthrough' accept unknown keys (strip drops them), so nothing is said.
    return out;
  };

  return convert(root);
};
