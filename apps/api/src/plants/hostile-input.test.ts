import {
  INT64_MAX,
  INT64_MIN,
  MAX_JSON_DEPTH,
  NAME_MAX_LENGTH,
  stringifyExactJson,
  TAG_MAX_LENGTH,
} from '@org/plant-contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '#test/expect-error';
import { conformingFetch as fetch } from '#test/openapi-conformance';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';
import type { StoredPlant } from '../store/plant-store.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.cleanup();
});

const post = (body: string) =>
  fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body,
  });

const rowCount = async () => (await server.store.list({ limit: 1_000_000 })).length;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the rule under test
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const validText = (max: number) =>
  fc
    .string({ unit: 'binary', minLength: 1, maxLength: max })
    .filter((text) => text.length <= max && text.isWellFormed() && !CONTROL.test(text));

const validPlant: fc.Arbitrary<StoredPlant> = fc
  .record(
    { id: fc.bigInt(INT64_MIN, INT64_MAX), name: validText(NAME_MAX_LENGTH), tag: validText(TAG_MAX_LENGTH) },
    { requiredKeys: ['id', 'name'] },
  )
  // A fresh plain object: fast-check's records are not strictly equal to what the store reads back.
  .map(({ id, name, tag }) => (tag === undefined ? { id, name } : { id, name, tag }));

describe('hostile JSON', () => {
  it.each([
    ['NUL in the name', '{"id":1,"name":"Fe\\u0000rn"}', /\bname must not contain control characters\b/],
    ['a newline in the tag', '{"id":1,"name":"Fern","tag":"a\\nb"}', /\btag must not contain control characters\b/],
    ['a duplicate id key', '{"id":1,"name":"Fern","id":2}', /key "id" twice/],
    ['a duplicate key written with an escape', '{"id":1,"name":"Fern","n\\u0061me":"Moss"}', /key "name" twice/],
    [
      'deep nesting',
      `{"id":1,"name":"Fern","x":${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}}`,
      /nested deeper/,
    ],
    [
      'very deep nesting',
      `{"id":1,"name":"Fern","x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
      /nested deeper|not valid JSON/,
    ],
    ['1e400', '{"id":1e400,"name":"Fern"}', /\bid\b/],
    ['-1e400', '{"id":-1e400,"name":"Fern"}', /\bid\b/],
    ['1e20', '{"id":1e20,"name":"Fern"}', /\bid\b/],
    ['a null tag', '{"id":1,"name":"Fern","tag":null}', /\btag\b/],
  ])('answers %s with 400 and stores nothing', async (_label, body, mentions) => {
    const before = await rowCount();
    await expectError(await post(body), 400, mentions);
    expect(await rowCount()).toBe(before);
  });
});

describe('property: valid bodies', () => {
  it('stores 1,000 generated plants exactly, answering each like a model of idempotent creation', async () => {
    const model = new Map<bigint, StoredPlant>();
    await fc.assert(
      fc.asyncProperty(validPlant, async (plant) => {
        const response = await post(stringifyExactJson(plant));
        const known = model.get(plant.id);
        if (known && (known.name !== plant.name || known.tag !== plant.tag)) {
          await expectError(response, 409, /already exists/);
          expect(await server.store.get(plant.id)).toStrictEqual(known);
          return;
        }
        expect(response.status).toBe(200);
        expect(await response.json()).toStrictEqual(
          plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag },
        );
        model.set(plant.id, plant);
        expect(await server.store.get(plant.id)).toStrictEqual(plant);
      }),
      { numRuns: 1000 },
    );
    expect(await rowCount()).toBeGreaterThanOrEqual(model.size);
  }, 60_000);
});

/** Ways to break a valid body; each must be refused with a 4xx Error and write nothing. */
const mutations: fc.Arbitrary<(plant: StoredPlant) => string>[] = [
  fc.constant(({ id }) => stringifyExactJson({ id })),
  fc.constant(({ name }) => JSON.stringify({ name })),
  fc
    .oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}), fc.double())
    .map((bad) => (plant) => stringifyExactJson({ ...plant, name: bad })),
  fc
    .oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(''), fc.constant([]))
    .map((bad) => (plant) => stringifyExactJson({ ...plant, tag: bad })),
  fc
    .oneof(
      fc.string(),
      fc.boolean(),
      fc.constant(null),
      // Doubles that are not integers, or lie outside int64 (1e16 is a fine id: it is exactly 10^16).
      fc.double().filter((value) => !Number.isInteger(value) || Math.abs(value) >= 2 ** 63),
      fc.bigInt({ min: INT64_MAX + 1n }),
      fc.bigInt({ max: INT64_MIN - 1n }),
    )
    .map((bad) => (plant) => stringifyExactJson({ ...plant, id: bad })),
  fc.constant((plant) => stringifyExactJson({ ...plant, name: '' })),
  fc.constant((plant) => stringifyExactJson({ ...plant, name: 'n'.repeat(NAME_MAX_LENGTH + 1) })),
  fc
    .integer({ min: 0, max: 0x1f })
    .map((code) => (plant) => stringifyExactJson({ ...plant, name: `${plant.name}${String.fromCharCode(code)}` })),
  fc.constant((plant) => stringifyExactJson({ ...plant, name: `${plant.name}\ud800` })),
  fc.constant((plant) => `${stringifyExactJson(plant).slice(0, -1)},"id":0}`),
  fc.nat().map((cut) => (plant) => {
    const text = stringifyExactJson(plant);
    return text.slice(0, cut % text.length);
  }),
  fc.constant((plant) => `[${stringifyExactJson(plant)}]`),
  fc.constant((plant) => `${stringifyExactJson(plant)}}`),
  fc.constant((plant) =>
    stringifyExactJson(plant)
      .replace(/"id":/, '"id":"')
      .replace(/,"name"/, '","name"'),
  ),
];

describe('property: mutated bodies', () => {
  it('refuses 1,000 mutated bodies with a 4xx Error, never 5xx, and writes no row', async () => {
    const before = await rowCount();
    await fc.assert(
      fc.asyncProperty(validPlant, fc.oneof(...mutations), async (plant, mutate) => {
        const response = await post(mutate(plant));
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
        await expectError(response, response.status);
      }),
      { numRuns: 1000 },
    );
    expect(await rowCount()).toBe(before);
  }, 60_000);
});
