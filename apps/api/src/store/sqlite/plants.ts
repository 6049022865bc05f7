/** The plant operations of the embedded store: their SQL, what the thread runs, how the store decodes it. */
import type { DatabaseSync } from 'node:sqlite';
import { samePlant } from '@org/plant-contract';
import type { CreateOutcome, StoredPlant } from '../plant-store.ts';
import { operation, type Thread } from './operation.ts';

export type PlantRow = [name: string, tag: string | null];

/** The plant statements, prepared once per database. */
export const plantStatements = (db: DatabaseSync) => {
  const select = db.prepare('SELECT name, tag FROM plants WHERE id = ?');
  select.setReturnArrays(true);
  // A row is listed while the rows before the one before it hold fewer than :maxBytes of JSON text
  // (see ListOptions.maxBytes): the bytes are counted here, so no more than that crosses to
  // the store's thread. The window runs over the `limit` rows of the inner query only.
  const listing = (where: string) => {
    const statement = db.prepare(
      `SELECT id, name, tag FROM (
         SELECT id, name, tag, sum(octet_length('{"id":' || id || ',"name":' || json_quote(name)
           || iif(tag IS NULL, '', ',"tag":' || json_quote(tag)) || '}'))
           OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) AS before
         FROM (SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT :limit + 0)
       ) WHERE before IS NULL OR before < :maxBytes ORDER BY id`,
    );
    statement.setReadBigInts(true);
    statement.setReturnArrays(true);
    return statement;
  };
  return {
    insert: db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    select,
    remove: db.prepare('DELETE FROM plants WHERE id = ?'),
    removeReturning: db.prepare('DELETE FROM plants WHERE id = ? RETURNING name, tag'),
    /** Listing statements by [has cursor][has tag]. */
    lists: [
      [listing(''), listing('WHERE tag = :tag')],
      [listing('WHERE id > :after'), listing('WHERE tag = :tag AND id > :after')],
    ] as const,
  };
};

export const toPlant = (id: bigint, name: string, tag: string | null): StoredPlant =>
  tag === null ? { id, name } : { id, name, tag };

type Created = true | 'announced' | PlantRow;

/** Also tells the store which answers were creates, to wake the delivery loop after announcements. */
export const decodeCreate = (plant: StoredPlant, result: Created): CreateOutcome => {
  if (result === true || result === 'announced') return { outcome: 'created', plant };
  const [name, tag] = result;
  const existing = toPlant(plant.id, name, tag);
  return samePlant(existing, plant) ? { outcome: 'replayed', plant: existing } : { outcome: 'conflict', existing };
};

/** Also tells the store which answers were deletes, as decodeCreate does. */
export const decodeDelete = (_: undefined, result: boolean | 'announced'): boolean => result !== false;

export const plantOperations = {
  /**
   * `true` when stored, `'announced'` when stored and announced to the webhook outbox (with the
   * create's traceparent, when traced), else the row met.
   */
  create: operation({
    arity: 4,
    writes: true,
    outbox: false,
    run: (thread: Thread, id: bigint, name: string, tag: string | null, traceparent: string | null): Created => {
      thread.beginWrite();
      const { plants } = thread;
      if (plants.insert.run(id, name, tag).changes !== 1) return plants.select.get(id) as unknown as PlantRow;
      // Same transaction as the plant: a create acknowledged is an announcement owed.
      if (!thread.announcing) return true;
      thread.webhooks.announce.run(id, name, tag, thread.now, traceparent);
      return 'announced';
    },
    decode: decodeCreate,
  }),
  /**
   * → whether a row was deleted, `'announced'` when it was and announced to the webhook outbox
   * (with the plant as it was); announced only while an endpoint receives deletions.
   */
  delete: operation({
    arity: 2,
    writes: true,
    outbox: false,
    run: (thread: Thread, id: bigint, traceparent: string | null): boolean | 'announced' => {
      thread.beginWrite();
      const { plants } = thread;
      if (!thread.announcingDeletions) return plants.remove.run(id).changes === 1;
      const row = plants.removeReturning.get(id) as { name: string; tag: string | null } | undefined;
      if (row === undefined) return false;
      thread.webhooks.announceDeletion.run(id, row.name, row.tag, thread.now, traceparent);
      return 'announced';
    },
    decode: decodeDelete,
  }),
  /** → the stored [name, tag], or null. */
  get: operation({
    arity: 1,
    writes: false,
    outbox: false,
    run: (thread: Thread, id: bigint): PlantRow | null =>
      (thread.plants.select.get(id) as unknown as PlantRow | undefined) ?? null,
    decode: (id: bigint, result): StoredPlant | undefined => (result === null ? undefined : toPlant(id, ...result)),
  }),
  /** → [id, name, tag, id, name, tag, …], bounded by `maxBytes` as ListOptions says. */
  list: operation({
    arity: 4,
    writes: false,
    outbox: false,
    run: (thread: Thread, after: bigint | null, limit: number, tag: string | null, maxBytes: number) => {
      const parameters: Record<string, bigint | number | string> = { limit, maxBytes };
      if (after !== null) parameters.after = after;
      if (tag !== null) parameters.tag = tag;
      const statement = thread.plants.lists[after === null ? 0 : 1][tag === null ? 0 : 1];
      return (statement.all(parameters) as unknown as (bigint | string | null)[][]).flat();
    },
    decode: (_: undefined, flat): StoredPlant[] => {
      const plants: StoredPlant[] = [];
      for (let at = 0; at < flat.length; at += 3) {
        plants.push(toPlant(flat[at] as bigint, flat[at + 1] as string, flat[at + 2] as string | null));
      }
      return plants;
    },
  }),
  health: operation({ arity: 0, writes: false, outbox: false, run: (): true => true, decode: (): void => {} }),
  /** → true, once the database is closed; always the last operation the store sends. */
  close: operation({
    arity: 0,
    writes: false,
    outbox: true,
    run: (thread: Thread): true => {
      thread.closing = true;
      return true;
    },
    decode: (): void => {},
  }),
};
