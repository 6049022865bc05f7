/**
 * The plant operations of the embedded store: their SQL, what the thread runs, how the store decodes
 * it. A plant crosses the thread as its JSON text (plantJson, made on the store's side) and is kept
 * so: the thread neither builds nor takes apart a plant, and a new field of Plant changes nothing here.
 */
import type { DatabaseSync } from 'node:sqlite';
import { parsePlantJson } from '@org/plant-contract/json-text';
import type { CreateOutcome, StoredPlant } from '../plant-store.ts';
import { announce } from './announce.ts';
import { operation, type Thread } from './operation.ts';

/** The plant statements, prepared once per database. */
export const plantStatements = (db: DatabaseSync) => {
  const pluck = (sql: string) => {
    const statement = db.prepare(sql);
    statement.setReturnArrays(true);
    return statement;
  };
  // A row is listed while the rows before the one before it hold fewer than :maxBytes of JSON text
  // (see ListOptions.maxBytes): the bytes are counted here, so no more than that crosses to the
  // store's thread. The window runs over the `limit` rows of the inner query only. `(:tag || '')` is
  // the tag, written so that SQLite does not plan the statement again at every run (see webhook-statements.ts).
  const listing = (where: string) =>
    pluck(
      `SELECT json FROM (
         SELECT id, json, sum(octet_length(json)) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) AS before
         FROM (SELECT id, json FROM plants ${where} ORDER BY id LIMIT :limit + 0)
       ) WHERE before IS NULL OR before < :maxBytes ORDER BY id`,
    );
  return {
    insert: db.prepare('INSERT INTO plants (id, tag, json) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    select: pluck('SELECT json FROM plants WHERE id = ?'),
    remove: db.prepare('DELETE FROM plants WHERE id = ?'),
    removeReturning: pluck('DELETE FROM plants WHERE id = ? RETURNING json'),
    /** Listing statements by [has cursor][has tag]. */
    lists: [
      [listing(''), listing("WHERE tag = (:tag || '')")],
      [listing('WHERE id > :after'), listing("WHERE tag = (:tag || '') AND id > :after")],
    ] as const,
  };
};

/** The stored text of the row a statement plucked, or undefined. */
const textOf = (row: unknown): string | undefined => (row as [string] | undefined)?.[0];

/**
 * What a create did: stored it ('announced' too when an endpoint receives creations), met the same
 * text (a replay), or met another plant under its id, whose text it answers.
 */
type Created = 'created' | 'announced' | 'replayed' | [conflict: string];

export const decodeCreate = (plant: StoredPlant, result: Created): CreateOutcome => {
  if (typeof result !== 'string') return { outcome: 'conflict', existing: parsePlantJson(result[0]) };
  return { outcome: result === 'replayed' ? 'replayed' : 'created', plant };
};

export const plantOperations = {
  /** Stores the plant (`json`, its plantJson) unless its id is taken, announced with the create's traceparent. */
  create: operation({
    arity: 4,
    writes: true,
    outbox: false,
    announces: true,
    run: (thread: Thread, id: bigint, tag: string | null, json: string, traceparent: string | null): Created => {
      thread.beginWrite();
      const { plants } = thread;
      if (plants.insert.run(id, tag, json).changes !== 1) {
        // Replays are told by text: plantJson writes the same plant as the same text.
        const stored = textOf(plants.select.get(id)) as string;
        return stored === json ? 'replayed' : [stored];
      }
      // Same transaction as the plant: a create acknowledged is an announcement owed.
      return announce(thread, 'newPlant', id, json, traceparent) ? 'announced' : 'created';
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
    announces: true,
    run: (thread: Thread, id: bigint, traceparent: string | null): boolean | 'announced' => {
      thread.beginWrite();
      const { plants } = thread;
      if (!thread.receiving.has('plantDeleted')) return plants.remove.run(id).changes === 1;
      const json = textOf(plants.removeReturning.get(id));
      if (json === undefined) return false;
      return announce(thread, 'plantDeleted', id, json, traceparent) ? 'announced' : true;
    },
    decode: (_: undefined, result): boolean => result !== false,
  }),
  /** → the stored text, or null. */
  get: operation({
    arity: 1,
    writes: false,
    outbox: false,
    announces: false,
    run: (thread: Thread, id: bigint): string | null => textOf(thread.plants.select.get(id)) ?? null,
    decode: (_: undefined, json): StoredPlant | undefined => (json === null ? undefined : parsePlantJson(json)),
  }),
  /** → the stored texts in id order, bounded by `maxBytes` as ListOptions says. */
  list: operation({
    arity: 4,
    writes: false,
    outbox: false,
    announces: false,
    run: (thread: Thread, after: bigint | null, limit: number, tag: string | null, maxBytes: number): string[] => {
      const parameters: Record<string, bigint | number | string> = { limit, maxBytes };
      if (after !== null) parameters.after = after;
      if (tag !== null) parameters.tag = tag;
      const statement = thread.plants.lists[after === null ? 0 : 1][tag === null ? 0 : 1];
      return statement.all(parameters).map(textOf) as string[];
    },
    decode: (_: undefined, texts): StoredPlant[] => texts.map(parsePlantJson),
  }),
  health: operation({
    arity: 0,
    writes: false,
    outbox: false,
    announces: false,
    run: (): true => true,
    decode: (): void => {},
  }),
  /** → true, once the database is closed; always the last operation the store sends. */
  close: operation({
    arity: 0,
    writes: false,
    outbox: true,
    announces: false,
    run: (thread: Thread): true => {
      thread.closing = true;
      return true;
    },
    decode: (): void => {},
  }),
};
