import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z4 } from 'zod/v4';
import { maxCharacters } from '../characters.ts';
import { atLeastOneProperty, refineDocumented, uniqueItems } from '../documented-refinement.ts';
import { sameSchema, toJsonSchema } from './json-schema.ts';

describe('toJsonSchema', () => {
  it('writes strings with their length bounds and pattern', () => {
    expect(toJsonSchema(maxCharacters(z.string().min(1), 5).regex(/^[a-z]+$/))).toEqual({
      type: 'string',
      minLength: 1,
      maxLength: 5,
      pattern: '^[a-z]+$',
    });
    expect(toJsonSchema(z.string().uuid())).toEqual({ type: 'string', format: 'uuid' });
  });

  it("refuses zod's own length bounds, which count UTF-16 code units where maxLength counts code points", () => {
    expect(() => toJsonSchema(z.string().max(5))).toThrow(/use maxCharacters/);
    expect(() => toJsonSchema(z.string().length(3))).toThrow(/use maxCharacters/);
    expect(() => toJsonSchema(z.string().min(2))).toThrow(/minimum length above 1/);
  });

  it('writes numbers, integers and bigints with their bounds', () => {
    expect(toJsonSchema(z.number())).toEqual({ type: 'number' });
    expect(toJsonSchema(z.number().int().min(1).lt(10))).toEqual({
      type: 'integer',
      minimum: 1,
      exclusiveMaximum: 10,
    });
    expect(toJsonSchema(z.bigint())).toEqual({ type: 'integer', format: 'int64' });
  });

  it('writes objects with required and optional properties, keeping unknown keys allowed unless strict', () => {
    const shape = { a: z.string(), b: z.number().optional(), c: z.boolean().default(true) };
    expect(toJsonSchema(z.object(shape))).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' }, c: { type: 'boolean', default: true } },
      required: ['a'],
    });
    expect(toJsonSchema(z.object({}).strict())).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: false,
    });
    expect(toJsonSchema(z.object({}).catchall(z.string()))).toEqual({
      type: 'object',
      properties: {},
      additionalProperties: { type: 'string' },
    });
  });

  it('writes arrays, unions, nullables, literals and enums', () => {
    expect(toJsonSchema(z.string().array().min(1).max(3))).toEqual({
      type: 'array',
      items: { type: 'string' },
      minItems: 1,
      maxItems: 3,
    });
    expect(toJsonSchema(z.union([z.string(), z.number()]))).toEqual({
      anyOf: [{ type: 'string' }, { type: 'number' }],
    });
    expect(toJsonSchema(z.string().nullable())).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] });
    expect(toJsonSchema(z.literal('x'))).toEqual({ const: 'x' });
    expect(toJsonSchema(z.enum(['a', 'b']))).toEqual({ type: 'string', enum: ['a', 'b'] });
  });

  it('writes the other zod types the converter knows', () => {
    const Color = { Red: 'red', Green: 'green' } as const;
    expect(toJsonSchema(z.null())).toEqual({ type: 'null' });
    expect(toJsonSchema(z.any())).toEqual({});
    expect(toJsonSchema(z.unknown())).toEqual({});
    expect(toJsonSchema(z.nativeEnum(Color))).toEqual({ enum: ['red', 'green'] });
    expect(toJsonSchema(z.string().email())).toEqual({ type: 'string', format: 'email' });
    expect(toJsonSchema(z.string().trim().toLowerCase().toUpperCase())).toEqual({ type: 'string' });
    expect(toJsonSchema(z.number().multipleOf(5).finite())).toEqual({ type: 'number', multipleOf: 5 });
    expect(toJsonSchema(z.number().gt(0))).toEqual({ type: 'number', exclusiveMinimum: 0 });
    expect(toJsonSchema(z.string().array().length(2))).toEqual({
      type: 'array',
      items: { type: 'string' },
      minItems: 2,
      maxItems: 2,
    });
    // Strict: an unbounded array has no minItems or maxItems key at all, not one set to undefined.
    expect(toJsonSchema(z.string().array())).toStrictEqual({ type: 'array', items: { type: 'string' } });
    expect(toJsonSchema(z.discriminatedUnion('k', [z.object({ k: z.literal('a') })]))).toEqual({
      anyOf: [{ type: 'object', properties: { k: { const: 'a' } }, required: ['k'] }],
    });
    expect(toJsonSchema(z.intersection(z.string(), z.string().uuid()))).toEqual({
      allOf: [{ type: 'string' }, { type: 'string', format: 'uuid' }],
    });
    expect(toJsonSchema(z.record(z.number()))).toEqual({ type: 'object', additionalProperties: { type: 'number' } });
    expect(toJsonSchema(z.tuple([z.string(), z.number()]))).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }, { type: 'number' }],
      items: false,
      minItems: 2,
    });
    expect(toJsonSchema(z.tuple([z.string()]).rest(z.boolean()))).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }],
      items: { type: 'boolean' },
      minItems: 1,
    });
    expect(toJsonSchema(z.string().readonly())).toEqual({ type: 'string' });
    expect(toJsonSchema(z.string().catch('x'))).toEqual({ type: 'string' });
    expect(toJsonSchema(z.string().brand('Name'))).toEqual({ type: 'string' });
    expect(toJsonSchema(z.string().pipe(z.string().uuid()))).toEqual({ type: 'string' });
  });

  it('refuses what it cannot express, naming it', () => {
    expect(() => toJsonSchema(z.string().ip())).toThrow('Cannot express the string check "ip" in JSON Schema');
    expect(() => toJsonSchema(z.date())).toThrow('Cannot express the zod type ZodDate in JSON Schema');
  });

  it('describes refinements and transforms by what they accept on the wire', () => {
    const digits = z
      .string()
      .regex(/^\d+$/)
      .transform(Number)
      .refine((n) => n > 0);
    expect(toJsonSchema(digits)).toEqual({ type: 'string', pattern: '^\\d+$' });
    expect(toJsonSchema(z.string().pipe(z.string().min(2)))).toEqual({ type: 'string' });
  });

  it('writes an array that uniqueItems refines with uniqueItems, through descriptions and optionals', () => {
    const tags = uniqueItems(z.array(z.string()).max(3), 'must not repeat a tag').describe('Tags');
    expect(toJsonSchema(tags.optional())).toEqual({
      description: 'Tags',
      type: 'array',
      items: { type: 'string' },
      maxItems: 3,
      uniqueItems: true,
    });
    expect(tags.safeParse(['a', 'a']).error?.issues[0]?.message).toBe('must not repeat a tag');
    // Any other refinement of an array says nothing it cannot.
    expect(toJsonSchema(z.array(z.string()).refine((items) => items.length !== 2))).toEqual({
      type: 'array',
      items: { type: 'string' },
    });
  });

  it('writes what a documented refinement says, beside a keyword the schema has already', () => {
    const lowerCase = refineDocumented(
      z.string().regex(/^\S*$/),
      (text) => (text === text.toLowerCase() ? undefined : 'must be lower case'),
      { pattern: '^[^A-Z]*$' },
    );
    expect(toJsonSchema(lowerCase)).toEqual({ type: 'string', pattern: '^\\S*$', allOf: [{ pattern: '^[^A-Z]*$' }] });
    expect(lowerCase.safeParse('aB').error?.issues[0]?.message).toBe('must be lower case');
  });

  it('writes atLeastOneProperty as an anyOf of each property required, and names them when refusing', () => {
    const changes = atLeastOneProperty(z.object({ a: z.string().optional(), b: z.number().optional() }));
    expect(toJsonSchema(changes)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'number' } },
      anyOf: [
        { properties: { a: true }, required: ['a'] },
        { properties: { b: true }, required: ['b'] },
      ],
    });
    expect(changes.safeParse({ c: 1 }).error?.issues[0]?.message).toBe('must have at least one of a and b');
    expect(changes.safeParse({ b: 1 }).success).toBe(true);
  });

  it('puts the description first, and the outermost one wins', () => {
    const inner = z.string().describe('inner');
    expect(Object.keys(toJsonSchema(inner))).toEqual(['description', 'type']);
    expect(toJsonSchema(inner.optional().describe('outer'))).toEqual({ description: 'outer', type: 'string' });
    expect(toJsonSchema(z.object({ a: inner.optional() }))).toEqual({
      type: 'object',
      properties: { a: { description: 'inner', type: 'string' } },
    });
  });

  it('writes a $ref wherever a named schema occurs, also when described at its use', () => {
    const Leaf = z.object({ colour: z.string() });
    const refs = [[Leaf, '#/components/schemas/Leaf']] as const;
    expect(toJsonSchema(z.object({ leaf: Leaf.describe('The leaf'), leaves: Leaf.array() }), { refs })).toEqual({
      type: 'object',
      properties: {
        leaf: { description: 'The leaf', $ref: '#/components/schemas/Leaf' },
        leaves: { type: 'array', items: { $ref: '#/components/schemas/Leaf' } },
      },
      required: ['leaf', 'leaves'],
    });
  });

  it('uses an override for a schema whose wire format zod cannot say, keeping its description', () => {
    const Id = z.union([z.number(), z.bigint()]).refine(() => true);
    const overrides = [[Id, { type: 'integer', format: 'int64', maximum: 2n ** 63n - 1n }]] as const;
    const schema = toJsonSchema(z.object({ id: Id.describe('The id') }), { overrides });
    expect(schema.properties).toEqual({
      id: { description: 'The id', type: 'integer', format: 'int64', maximum: 9223372036854775807n },
    });
    expect(toJsonSchema(Id, { overrides })).not.toHaveProperty('description');
  });

  it.each([
    ['a type with no JSON form', z.date(), /ZodDate/],
    ['a lazy schema', z.lazy(() => z.string()), /ZodLazy/],
    ['a string check it does not know', z.string().ip(), /string check "ip"/],
    // A check of a later zod version, made by hand.
    // A zod 4 schema: its definition has no typeName.
    ['a schema of another zod version', z4.string() as never, /the zod type \(unknown\)/],
    ['a number check it does not know', z.number()._addCheck({ kind: 'prime' } as never), /number check "prime"/],
    ['a case-insensitive pattern', z.string().regex(/^a$/i), /regex flags/],
  ])('refuses %s instead of writing a wrong schema', (_, schema, message) => {
    expect(() => toJsonSchema(schema)).toThrow(message);
  });
});

describe('sameSchema', () => {
  it('sees a described copy as the same schema, and a different one as different', () => {
    const text = z.string().min(1);
    expect(sameSchema(text, text.describe('x'))).toBe(true);
    expect(sameSchema(text.describe('a'), text.describe('b'))).toBe(true);
    expect(sameSchema(text, z.string().min(1))).toBe(false);
    expect(sameSchema(text, text.optional())).toBe(false);
  });
});
