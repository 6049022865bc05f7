import { MAX_JSON_DEPTH, parseExactJson } from '@org/plant-contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conformingFetch as fetch } from '#test/openapi-conformance';
import { startTestServer, TEST_TOKEN, type TestServer } from '#test/test-server';

/**
 * `express.json()` and the exact-int64 re-parse must accept the same bodies and answer them alike.
 * Each generated body is sent twice, differing only in its id: once small (plain JSON.parse keeps
 * it, and unless something else in the body looks inexact that is the only parse), once beyond 2^53
 * (always re-parsed exactly). Both must get the same status and message, and on 200 store the same
 * plant under their own id.
 */

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.cleanup();
});

const post = (body: string | Uint8Array<ArrayBuffer>) =>
  fetch(`${server.url}/plants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body,
  });

const read = async (id: bigint) => {
  const response = await fetch(`${server.url}/plants/${id}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
  return { status: response.status, body: parseExactJson(await response.text()) };
};

const BOM = '\uFEFF';
const ID = '\u0000ID\u0000';

const whitespace = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r'), maxLength: 3 });

/** A JSON string literal of `text`, each UTF-16 unit written plainly or as a \u escape. */
const stringLiteral = (text: fc.Arbitrary<string>) =>
  text.chain((value) =>
    fc.array(fc.boolean(), { minLength: value.length, maxLength: value.length }).map((escaped) => {
      const characters = value
        .split('')
        .map((character, index) =>
          escaped[index]
            ? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`
            : JSON.stringify(character).slice(1, -1),
        );
      return `"${characters.join('')}"`;
    }),
  );

/** Number literals of every size and form: small, beyond 2^53, beyond int64, fractions, exponents. */
const numberLiteral = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc
    .tuple(
      fc.bigInt({ min: 0n, max: 10n ** 20n }),
      fc.nat(99_999),
      fc.constantFrom('e', 'E'),
      fc.integer({ min: -400, max: 400 }),
    )
    .map(([whole, fraction, e, exponent]) => `${whole}.${fraction}${e}${exponent}`),
);

/** Any JSON value, nested at times beyond what the API accepts. */
const anyValue = fc.oneof(
  fc.json({ maxDepth: 3 }),
  numberLiteral,
  fc.nat(MAX_JSON_DEPTH + 3).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
);

/** How the id is written: `#` stands for the id's decimal digits. */
const ID_FORMS: readonly [string, (id: bigint) => bigint][] = [
  ['#', (id) => id],
  ['-#', (id) => -id],
  ['#.0', (id) => id],
  ['#E+0', (id) => id],
  ['#0e-1', (id) => id],
];

const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
const keyLiteral = (key: string) => stringLiteral(fc.constant(key));
const member = (key: fc.Arbitrary<string>, value: fc.Arbitrary<string>) =>
  fc.tuple(key, whitespace, whitespace, value).map(([k, before, after, v]) => `${k}${before}:${after}${v}`);

const body = fc
  .record({
    bom: fc.boolean(),
    id: fc.option(member(keyLiteral('id'), fc.constant(ID)), { freq: 8 }),
    name: fc.option(
      member(
        keyLiteral('name'),
        fc.oneof({ arbitrary: stringLiteral(text), weight: 5 }, { arbitrary: anyValue, weight: 1 }),
      ),
      { freq: 8 },
    ),
    tag: fc.option(member(keyLiteral('tag'), stringLiteral(text))),
    extras: fc.array(member(stringLiteral(fc.string({ maxLength: 6 })), anyValue), { maxLength: 2 }),
    duplicate: fc.oneof(
      { arbitrary: fc.constant(null), weight: 8 },
      { arbitrary: fc.constantFrom('id', 'name', 'tag'), weight: 1 },
    ),
    spaces: fc.array(whitespace, { minLength: 4, maxLength: 4 }),
  })
  .chain(({ bom, id, name, tag, extras, duplicate, spaces }) => {
    const members = [id, name, tag, ...extras].filter((entry): entry is string => entry !== null);
    if (duplicate !== null) members.push(`"${duplicate}":"again"`);
    return fc.shuffledSubarray(members, { minLength: members.length }).map((ordered) => {
      const [a = '', b = '', c = '', d = ''] = spaces;
      return `${bom ? BOM : ''}${a}{${b}${ordered.join(`${c},`)}${d}}${a}`;
    });
  });

describe('one parser, one set of answers', () => {
  it('answers a byte-order mark before a body with an id beyond 2^53 like one with a small id', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id":9007199254740993,"name":"x"}')]);
    const response = await post(new Uint8Array(bytes));
    expect(response.status).toBe(200);
    expect(await response.json()).toStrictEqual({ name: 'x' });
    expect(await read(9007199254740993n)).toStrictEqual({
      status: 200,
      body: { id: 9007199254740993n, name: 'x' },
    });
    const small = await post(new Uint8Array(Buffer.concat([bytes.subarray(0, 3), Buffer.from('{"id":7,"name":"x"}')])));
    expect(small.status).toBe(200);
  });

  it('gives a body the same answer whether its id is small or beyond 2^53', async () => {
    let run = 0n;
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom(...ID_FORMS), async (template, [form, signed]) => {
        run += 1n;
        const smallId = 1_000_000n + run;
        const bigId = 2n ** 53n + 2n * run + 1n;
        const render = (id: bigint) => template.replace(ID, form.replace('#', String(id)));
        const [small, big] = [await post(render(smallId)), await post(render(bigId))];
        const answers = [
          { status: small.status, body: await small.text() },
          { status: big.status, body: await big.text() },
        ];
        expect(answers[0]?.status).not.toBe(500);
        expect(answers[1]).toStrictEqual(answers[0]);
        if (small.status !== 200) return;
        const [storedSmall, storedBig] = [await read(signed(smallId)), await read(signed(bigId))];
        expect([storedSmall.status, storedBig.status]).toEqual([200, 200]);
        const { id: smallRead, ...smallPlant } = storedSmall.body as { id: number | bigint };
        const { id: bigRead, ...bigPlant } = storedBig.body as { id: number | bigint };
        expect(bigPlant).toStrictEqual(smallPlant);
        expect([BigInt(smallRead), bigRead]).toStrictEqual([signed(smallId), signed(bigId)]);
      }),
      { numRuns: 150 },
    );
  });
});
