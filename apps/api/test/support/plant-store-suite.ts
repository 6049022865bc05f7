import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type CreateOutcome,
  type PlantStore,
  type StoredPlant,
  StoreUnavailableError,
} from '../../src/store/plant-store.ts';
import { plantBytes } from '../../src/store/row-bytes.ts';
import { describeRequestStore } from './request-store-suite.ts';
import { describeWebhookStore } from './webhook-store-suite.ts';

export type OpenedStore = {
  store: PlantStore;
  /** Releases everything the store used; must also work after the test has closed the store. */
  cleanup(): Promise<void>;
};

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const countOutcomes = (results: readonly CreateOutcome[]) => ({
  created: results.filter((result) => result.outcome === 'created').length,
  replayed: results.filter((result) => result.outcome === 'replayed').length,
  conflict: results.filter((result) => result.outcome === 'conflict').length,
});

/**
 * The behaviour every PlantStore backend must show, run once per backend against a fresh store
 * per test, so that SQLite and PostgreSQL cannot drift apart.
 */
export const describePlantStore = (name: string, open: () => Promise<OpenedStore>): void => {
  describe(`PlantStore behaviour: ${name}`, () => {
    let opened: OpenedStore | undefined;
    const store = (): PlantStore => {
      if (opened === undefined) throw new Error('The store was not opened.');
      return opened.store;
    };

    beforeEach(async () => {
      opened = await open();
    });

    afterEach(async () => {
      await opened?.cleanup();
      opened = undefined;
    });

    describe('create and get', () => {
      it('creates a plant with a tag and reads back exactly id, name and tag', async () => {
        const plant: StoredPlant = { id: 1n, name: 'Monstera', tag: 'indoor' };
        expect(await store().create(plant)).toStrictEqual({ outcome: 'created', plant });
        expect(await store().get(1n)).toStrictEqual({ id: 1n, name: 'Monstera', tag: 'indoor' });
      });

      it('reads back a plant without a tag with no tag key at all', async () => {
        expect(await store().create({ id: 2n, name: 'Fern' })).toStrictEqual({
          outcome: 'created',
          plant: { id: 2n, name: 'Fern' },
        });
        const got = await store().get(2n);
        expect(got).toStrictEqual({ id: 2n, name: 'Fern' });
        expect(got && Object.keys(got)).toEqual(['id', 'name']);
      });

      it('keeps names and tags exactly, including non-ASCII text and the longest accepted lengths', async () => {
        const plants: StoredPlant[] = [
          { id: 10n, name: 'Ficus lyrata 🌿 — «Geige»', tag: '観葉植物' },
          { id: 11n, name: 'n'.repeat(200), tag: 't'.repeat(100) },
          { id: 12n, name: ' leading and trailing spaces ', tag: "O'Brien; DROP TABLE plants; --" },
        ];
        for (const plant of plants) expect((await store().create(plant)).outcome).toBe('created');
        for (const plant of plants) expect(await store().get(plant.id)).toStrictEqual(plant);
      });

      it('answers undefined for an id that was never stored', async () => {
        await store().create({ id: 3n, name: 'Aloe' });
        expect(await store().get(4n)).toBeUndefined();
        expect(await store().get(-3n)).toBeUndefined();
      });

      it('treats 2^53 and 2^53 + 1 as two different plants', async () => {
        const a: StoredPlant = { id: 9007199254740992n, name: 'Two to the fifty-three' };
        const b: StoredPlant = { id: 9007199254740993n, name: 'One more' };
        expect((await store().create(a)).outcome).toBe('created');
        expect((await store().create(b)).outcome).toBe('created');
        expect(await store().get(9007199254740992n)).toStrictEqual(a);
        expect(await store().get(9007199254740993n)).toStrictEqual(b);
      });

      it.each([
        ['the smallest int64', INT64_MIN],
        ['the largest int64', INT64_MAX],
        ['zero', 0n],
        ['minus one', -1n],
      ])('round-trips %s exactly', async (_label, id) => {
        expect(await store().create({ id, name: `Plant ${id}`, tag: 'bound' })).toStrictEqual({
          outcome: 'created',
          plant: { id, name: `Plant ${id}`, tag: 'bound' },
        });
        const got = await store().get(id);
        expect(got).toStrictEqual({ id, name: `Plant ${id}`, tag: 'bound' });
        expect(typeof got?.id).toBe('bigint');
      });
    });

    describe('idempotent creation', () => {
      it.each([
        ['with a tag', { id: 20n, name: 'Monstera', tag: 'indoor' }],
        ['without a tag', { id: 21n, name: 'Fern' }],
      ] satisfies [string, StoredPlant][])(
        'replays an identical plant %s and changes nothing',
        async (_label, plant) => {
          expect((await store().create(plant)).outcome).toBe('created');
          expect(await store().create({ ...plant })).toStrictEqual({ outcome: 'replayed', plant });
          expect(await store().create({ ...plant })).toStrictEqual({ outcome: 'replayed', plant });
          expect(await store().get(plant.id)).toStrictEqual(plant);
        },
      );

      it.each([
        ['a different name', { id: 30n, name: 'Monstera', tag: 'indoor' }, { id: 30n, name: 'Ficus', tag: 'indoor' }],
        [
          'a name differing only in case',
          { id: 31n, name: 'Monstera', tag: 'indoor' },
          { id: 31n, name: 'monstera', tag: 'indoor' },
        ],
        [
          'a different tag',
          { id: 32n, name: 'Monstera', tag: 'indoor' },
          { id: 32n, name: 'Monstera', tag: 'outdoor' },
        ],
        ['the tag removed', { id: 33n, name: 'Monstera', tag: 'indoor' }, { id: 33n, name: 'Monstera' }],
        ['a tag added', { id: 34n, name: 'Monstera' }, { id: 34n, name: 'Monstera', tag: 'indoor' }],
      ] satisfies [string, StoredPlant, StoredPlant][])(
        'answers conflict for the same id with %s and keeps the stored plant',
        async (_label, stored, other) => {
          expect((await store().create(stored)).outcome).toBe('created');
          expect(await store().create(other)).toStrictEqual({ outcome: 'conflict', existing: stored });
          expect(await store().get(stored.id)).toStrictEqual(stored);
          // The first plant still replays: the conflicting attempt left no trace.
          expect(await store().create(stored)).toStrictEqual({ outcome: 'replayed', plant: stored });
        },
      );
    });

    describe('concurrency', () => {
      it('creates 200 distinct plants submitted at once, all readable afterwards', async () => {
        const plants = Array.from(
          { length: 200 },
          (_, index): StoredPlant =>
            index % 2 === 0
              ? { id: BigInt(index) * 1_000_003n - 50_000_000n, name: `Plant ${index}`, tag: `tag-${index % 7}` }
              : { id: BigInt(index) * 1_000_003n - 50_000_000n, name: `Plant ${index}` },
        );
        const results = await Promise.all(plants.map((plant) => store().create(plant)));
        expect(results.map((result) => result.outcome)).toStrictEqual(plants.map(() => 'created'));
        const read = await Promise.all(plants.map((plant) => store().get(plant.id)));
        expect(read).toStrictEqual(plants);
      });

      it('creates one id exactly once when the same plant is submitted 50 times at once', async () => {
        const plant: StoredPlant = { id: 40n, name: 'Calathea', tag: 'shade' };
        const results = await Promise.all(Array.from({ length: 50 }, () => store().create({ ...plant })));
        expect(countOutcomes(results)).toStrictEqual({ created: 1, replayed: 49, conflict: 0 });
        for (const result of results) expect(result).toMatchObject({ plant });
        expect(await store().get(40n)).toStrictEqual(plant);
      });

      it('stores exactly one of several different plants raced under one id, and answers the rest from it', async () => {
        const variants: StoredPlant[] = [
          { id: 41n, name: 'Pothos' },
          { id: 41n, name: 'Pothos', tag: 'golden' },
          { id: 41n, name: 'Philodendron', tag: 'golden' },
        ];
        const attempts = Array.from(
          { length: 60 },
          (_, index) => ({ ...variants[index % variants.length] }) as StoredPlant,
        );
        const results = await Promise.all(attempts.map((plant) => store().create(plant)));

        const created = results.filter((result) => result.outcome === 'created');
        expect(created).toHaveLength(1);
        const winner = (created[0] as { plant: StoredPlant }).plant;
        for (const [index, result] of results.entries()) {
          const attempt = attempts[index] as StoredPlant;
          if (result.outcome === 'created') continue;
          const sameAsWinner = attempt.name === winner.name && attempt.tag === winner.tag;
          expect(result).toStrictEqual(
            sameAsWinner ? { outcome: 'replayed', plant: winner } : { outcome: 'conflict', existing: winner },
          );
        }
        expect(countOutcomes(results)).toStrictEqual({ created: 1, replayed: 19, conflict: 40 });
        expect(await store().get(41n)).toStrictEqual(winner);
      });
    });

    describe('list', () => {
      const seed = async () => {
        const plants: StoredPlant[] = [
          { id: INT64_MAX, name: 'Max', tag: 'b' },
          { id: 3n, name: 'Three', tag: 'a' },
          { id: -5n, name: 'Minus five' },
          { id: INT64_MIN, name: 'Min', tag: 'a' },
          { id: 9007199254740993n, name: 'Big', tag: 'a' },
          { id: 9007199254740992n, name: 'Big too', tag: 'b' },
        ];
        await Promise.all(plants.map((plant) => store().create(plant)));
        return [...plants].sort((a, b) => (a.id < b.id ? -1 : 1));
      };

      it('lists plants ordered by id, exactly as stored', async () => {
        const sorted = await seed();
        expect(await store().list({ limit: 100 })).toStrictEqual(sorted);
      });

      it('pages with limit and an after cursor without skipping or repeating', async () => {
        const sorted = await seed();
        const seen: StoredPlant[] = [];
        let after: bigint | undefined;
        for (;;) {
          const page = await store().list(after === undefined ? { limit: 4 } : { limit: 4, after });
          seen.push(...page);
          if (page.length < 4) break;
          after = page.at(-1)?.id;
        }
        expect(seen).toStrictEqual(sorted);
        expect(await store().list({ limit: 2, after: 9007199254740992n })).toStrictEqual(
          sorted.filter((plant) => plant.id > 9007199254740992n).slice(0, 2),
        );
      });

      it('filters by tag, with the cursor', async () => {
        const sorted = await seed();
        const tagged = sorted.filter((plant) => plant.tag === 'a');
        expect(await store().list({ limit: 100, tag: 'a' })).toStrictEqual(tagged);
        expect(await store().list({ limit: 1, tag: 'a', after: INT64_MIN })).toStrictEqual(tagged.slice(1, 2));
        expect(await store().list({ limit: 100, tag: 'none' })).toStrictEqual([]);
      });

      it('ends a list one plant past the first that brings its JSON text to maxBytes (UTF-8), with the cursor and tag', async () => {
        // Ids 1 to 9, each plant's JSON 33 bytes: a four-byte character in the name, a digit, the tag.
        const plants = Array.from({ length: 9 }, (_, index) => ({
          id: BigInt(index + 1),
          name: `🌿${index}`,
          tag: 'a',
        }));
        await Promise.all(plants.map((plant) => store().create(plant)));
        expect(plants.map(plantBytes)).toStrictEqual(Array(9).fill(33));
        // 66 bytes are reached at the second plant: the list ends one past it.
        expect(await store().list({ limit: 100, maxBytes: 66 })).toStrictEqual(plants.slice(0, 3));
        expect(await store().list({ limit: 100, maxBytes: 67 })).toStrictEqual(plants.slice(0, 4));
        expect(await store().list({ limit: 100, maxBytes: 1 })).toStrictEqual(plants.slice(0, 2));
        expect(await store().list({ limit: 2, maxBytes: 1_000 })).toStrictEqual(plants.slice(0, 2));
        expect(await store().list({ limit: 100, maxBytes: 66, after: 6n, tag: 'a' })).toStrictEqual(plants.slice(6));
        expect(await store().list({ limit: 100, maxBytes: 1_000 })).toStrictEqual(plants);
      });

      it('answers an empty list for an empty store or past the last id', async () => {
        expect(await store().list({ limit: 10 })).toStrictEqual([]);
        await seed();
        expect(await store().list({ limit: 10, after: INT64_MAX })).toStrictEqual([]);
      });
    });

    describe('delete', () => {
      it('deletes a stored plant, reports whether there was one, and lets the id be created again', async () => {
        await store().create({ id: 9007199254740993n, name: 'Gone', tag: 'x' });
        await store().create({ id: 9007199254740992n, name: 'Stays' });
        expect(await store().delete(9007199254740993n)).toBe(true);
        expect(await store().get(9007199254740993n)).toBeUndefined();
        expect(await store().get(9007199254740992n)).toStrictEqual({ id: 9007199254740992n, name: 'Stays' });
        expect(await store().delete(9007199254740993n)).toBe(false);
        expect(await store().create({ id: 9007199254740993n, name: 'Back' })).toStrictEqual({
          outcome: 'created',
          plant: { id: 9007199254740993n, name: 'Back' },
        });
      });

      it('keeps the order of writes: create, delete, create of one id issued together', async () => {
        const [first, deleted, second] = await Promise.all([
          store().create({ id: 70n, name: 'First' }),
          store().delete(70n),
          store().create({ id: 70n, name: 'Second' }),
        ]);
        expect(first.outcome).toBe('created');
        expect(deleted).toBe(true);
        expect(second.outcome).toBe('created');
        expect(await store().get(70n)).toStrictEqual({ id: 70n, name: 'Second' });
      });

      it('refuses deletes once closed', async () => {
        await store().close();
        await expect(store().delete(1n)).rejects.toBeInstanceOf(StoreUnavailableError);
      });
    });

    describeWebhookStore(store);
    describeRequestStore(store);

    describe('health and close', () => {
      it('reports healthy while open', async () => {
        await expect(store().health()).resolves.toBeUndefined();
      });

      it('refuses writes and reports unhealthy once closed', async () => {
        await store().create({ id: 50n, name: 'Cactus' });
        await store().close();
        await expect(store().create({ id: 51n, name: 'Agave' })).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store().health()).rejects.toBeInstanceOf(StoreUnavailableError);
        // Closing twice is harmless: shutdown paths may race.
        await expect(store().close()).resolves.toBeUndefined();
      });

      it('settles creates submitted just before close: each is either stored or refused as unavailable', async () => {
        const plants = Array.from(
          { length: 20 },
          (_, index): StoredPlant => ({ id: BigInt(60 + index), name: 'Late' }),
        );
        const pending = plants.map((plant) => store().create(plant));
        await store().close();
        const settled = await Promise.allSettled(pending);
        for (const result of settled) {
          if (result.status === 'fulfilled') expect(result.value.outcome).toBe('created');
          else expect(result.reason).toBeInstanceOf(StoreUnavailableError);
        }
      });
    });
  });
};
