import { performance } from 'node:perf_hooks';
import type { WebhookEventType } from '@org/plant-contract';
import { afterEach, expect, it } from 'vitest';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';
import { PostgresPlantStore } from './postgres-store.ts';

const CAPS = { perOwner: 100, total: 10_000 };

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const database = async (): Promise<TestDatabase> => {
  const created = await freshDatabase('plant_retype');
  cleanups.push(() => created.drop());
  return created;
};

const openStore = async (url: string): Promise<PostgresPlantStore> => {
  const store = await PostgresPlantStore.open({ url, poolSize: 4 });
  cleanups.push(() => store.close());
  return store;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A create or delete, and when its caller sent it and had its answer. */
type Operation = { type: WebhookEventType; plantId: bigint; acked: number };
/** A change of the endpoint's types: from when it was asked to when it was answered. */
type Change = { types: WebhookEventType[]; started: number; acked: number };

/**
 * The types an operation answered at `acked` must have been announced under, or undefined when it
 * was answered while a change ran (then either is right): the last change answered before it, so
 * long as the next had not begun.
 */
const typesAt = (acked: number, initial: WebhookEventType[], changes: Change[]): WebhookEventType[] | undefined => {
  let types = initial;
  for (const change of changes) {
    if (acked < change.started) return types;
    if (acked <= change.acked) return undefined;
    types = change.types;
  }
  return types;
};

describeWithPostgres('changing an endpoint’s event types on PostgreSQL', () => {
  it('announces each create and delete by the types of its time, while replicas create, delete and fan out at once', async () => {
    const { url } = await database();
    const replicas = [await openStore(url), await openStore(url), await openStore(url)];
    const [changer, fanner] = replicas as [PostgresPlantStore, PostgresPlantStore, PostgresPlantStore];
    const initial: WebhookEventType[] = ['plantDeleted'];
    await changer.webhooks.createEndpoint(
      {
        id: 'ep_changed',
        url: 'https://hooks.example.com/changed',
        secret: 'whsec_a',
        owner: 'operator',
        eventTypes: initial,
      },
      CAPS,
    );
    // Plants to delete, created while no endpoint receives creations.
    const TO_DELETE = 3_000;
    for (let first = 1; first <= TO_DELETE; first += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, index) => changer.create({ id: BigInt(first + index), name: 'Doomed' })),
      );
    }

    const operations: Operation[] = [];
    let running = true;
    let nextCreate = TO_DELETE + 1;
    let nextDelete = 1;
    // Each replica's requests, several at once: creates of new plants and deletes of the old ones.
    const worker = async (store: PostgresPlantStore, creates: boolean) => {
      while (running) {
        if (creates) {
          const plantId = BigInt(nextCreate++);
          expect((await store.create({ id: plantId, name: 'Fern' })).outcome).toBe('created');
          operations.push({ type: 'newPlant', plantId, acked: performance.now() });
        } else if (nextDelete <= TO_DELETE) {
          const plantId = BigInt(nextDelete++);
          expect(await store.delete(plantId)).toBe(true);
          operations.push({ type: 'plantDeleted', plantId, acked: performance.now() });
        } else return;
      }
    };
    // Another replica's delivery loop, fanning out as it claims.
    const deliveryLoop = async () => {
      while (running) {
        await fanner.webhooks.claimDue({ limit: 20, leaseMs: 600_000, perEndpoint: 20, room: new Map() });
        await sleep(1);
      }
    };
    const work = [
      ...replicas.flatMap((store) => [
        worker(store, true),
        worker(store, false),
        worker(store, true),
        worker(store, false),
      ]),
      deliveryLoop(),
    ];

    // Each change adds one type and removes the other: both ways, for creations and deletions.
    const changes: Change[] = [];
    for (let index = 0; index < 40; index++) {
      await sleep(3);
      const types: WebhookEventType[] = index % 2 === 0 ? ['newPlant'] : ['plantDeleted'];
      const started = performance.now();
      const answer = await changer.webhooks.updateEndpoint('ep_changed', { eventTypes: types });
      expect(answer.outcome).toBe('updated');
      changes.push({ types, started, acked: performance.now() });
    }
    await sleep(3);
    running = false;
    await Promise.all(work);

    const deliveries = (await changer.webhooks.listDeliveries('ep_changed', 1_000_000)) ?? [];
    const delivered = new Map<string, number>();
    for (const { type, plantId } of deliveries) {
      const key = `${type} ${plantId}`;
      delivered.set(key, (delivered.get(key) ?? 0) + 1);
    }
    expect([...delivered].filter(([, count]) => count > 1)).toStrictEqual([]);
    const wrong = operations.flatMap(({ type, plantId, acked }) => {
      const types = typesAt(acked, initial, changes);
      if (types === undefined) return [];
      const expected = types.includes(type);
      return delivered.has(`${type} ${plantId}`) === expected ? [] : [`${type} ${plantId}: expected ${expected}`];
    });
    // Enough answered between changes to tell.
    const decided = operations.filter(({ acked }) => typesAt(acked, initial, changes) !== undefined);
    expect(decided.filter(({ type }) => type === 'newPlant').length).toBeGreaterThan(100);
    expect(decided.filter(({ type }) => type === 'plantDeleted').length).toBeGreaterThan(100);
    expect(wrong).toStrictEqual([]);
  }, 120_000);
});
