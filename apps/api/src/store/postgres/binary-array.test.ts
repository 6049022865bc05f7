import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';
import { int8Array, textArray } from './binary-array.ts';

const TEXTS = [
  '{"id":1,"name":"Fern","tag":"a \\"quoted\\" tag"}',
  '',
  null,
  'NULL',
  'back\\slash, {braces}, "quotes", commas',
  'Grüße 🌿',
  '\ud800 lone',
];
const IDS = [0n, 1n, -1n, 9_223_372_036_854_775_807n, -9_223_372_036_854_775_808n];

describe('binary arrays', () => {
  it('writes the header array_recv reads, then each length and value', () => {
    const bytes = textArray(['ab', null]);
    expect([...bytes]).toEqual([
      ...[0, 0, 0, 1], // one dimension
      ...[0, 0, 0, 1], // has nulls
      ...[0, 0, 0, 25], // text
      ...[0, 0, 0, 2], // two elements
      ...[0, 0, 0, 1], // from index 1
      ...[0, 0, 0, 2, 0x61, 0x62],
      ...[0xff, 0xff, 0xff, 0xff], // NULL
    ]);
    expect([...int8Array([258n])]).toEqual([
      ...[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 20, 0, 0, 0, 1, 0, 0, 0, 1],
      ...[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2],
    ]);
  });

  it('writes an empty array with no dimension', () => {
    expect([...textArray([])]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25]);
    expect([...int8Array([])]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 20]);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const bytes = textArray(['🌿']);
    expect(bytes.readInt32BE(20)).toBe(4);
    expect(bytes.length).toBe(28);
  });

  it('refuses an id outside int8', () => {
    expect(() => int8Array([9_223_372_036_854_775_808n])).toThrow(RangeError);
  });
});

describeWithPostgres('binary arrays on PostgreSQL', () => {
  let database: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    database = await freshDatabase('binary_array');
    client = new pg.Client(database.url);
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  it('reads back every text and id as sent', async () => {
    const { rows } = await client.query('SELECT $1::text[] AS texts, $2::int8[] AS ids', [
      textArray(TEXTS),
      int8Array(IDS),
    ]);
    expect(rows[0].texts).toEqual(TEXTS.map((text) => (text === null ? null : Buffer.from(text).toString())));
    expect(rows[0].ids).toEqual(IDS.map(String));
  });

  it('reads back an empty array', async () => {
    const { rows } = await client.query('SELECT cardinality($1::text[]) AS texts, cardinality($2::int8[]) AS ids', [
      textArray([]),
      int8Array([]),
    ]);
    expect(rows[0]).toEqual({ texts: 0, ids: 0 });
  });

  it('is refused when the element type is not the parameter type', async () => {
    await expect(client.query('SELECT $1::text[]', [int8Array([1n])])).rejects.toThrow(
      /element type 20 \(bigint\) instead of expected 25 \(text\)/,
    );
  });
});
