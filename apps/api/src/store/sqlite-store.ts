import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import {
  type CreateOutcome,
  type ListOptions,
  type PlantStore,
  type StoredPlant,
  StoreUnavailableError,
  samePlant,
} from './plant-store.ts';
import { sqliteMigrations } from './sqlite-migrations.ts';

export const SQLITE_FILE_NAME = 'plants.sqlite';

/** Another process holds the data directory; sharing it would not be safe. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/** A queued write; writes run in arrival order inside the next shared transaction. */
type PendingWrite = {
  run: () => unknown;
  resolve: (result: unknown) => void;
  reject: (error: unknown) => void;
};

type Row = { id: bigint; name: string; tag: string | null };

const SQLITE_BUSY = 5;

const toPlant = (row: Row): StoredPlant =>
  row.tag === null ? { id: row.id, name: row.name } : { id: row.id, name: row.name, tag: row.tag };

const isBusy = (error: unknown): boolean => (error as { errcode?: number } | null)?.errcode === SQLITE_BUSY;

/** Brings the schema to the newest version, each migration in its own transaction. */
const migrate = (db: DatabaseSync): void => {
  const { user_version: current } = db.prepare('PRAGMA user_version').get() as { user_version: number };
  if (current > sqliteMigrations.length) {
    throw new Error(
      `The database schema is at version ${current}, newer than this build knows (${sqliteMigrations.length}); run a newer release.`,
    );
  }
  for (const [index, sql] of sqliteMigrations.entries()) {
    if (index < current) continue;
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(sql);
      db.exec(`PRAGMA user_version = ${index + 1}`);
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
  }
};

const openDatabase = (path: string): DatabaseSync => {
  const db = new DatabaseSync(path, { timeout: 0 });
  try {
    // Exclusive locking makes a second process fail fast instead of sharing the file; the OS drops
    // the lock when this process dies, even on kill -9, so nothing stale is left behind.
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('PRAGMA journal_mode = WAL');
    // FULL: a commit is on disk (WAL fsynced) before any create is acknowledged.
    db.exec('PRAGMA synchronous = FULL');
    db.exec('BEGIN IMMEDIATE');
    db.exec('COMMIT');
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
};

/**
 * The embedded store: one SQLite database under the data directory, written through node:sqlite.
 * Creates that arrive together share one transaction (group commit), so one fsync acknowledges many.
 */
export class SqlitePlantStore implements PlantStore {
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #select: StatementSync;
  readonly #delete: StatementSync;
  /** Listing statements by [has cursor][has tag]. */
  readonly #list: readonly (readonly StatementSync[])[];
  #queue: PendingWrite[] = [];
  #flushScheduled = false;
  #closed = false;

  private constructor(db: DatabaseSync) {
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
    this.#select = db.prepare('SELECT id, name, tag FROM plants WHERE id = ?');
    this.#select.setReadBigInts(true);
    this.#delete = db.prepare('DELETE FROM plants WHERE id = ?');
    const listing = (where: string) => {
      const statement = db.prepare(`SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT :limit`);
      statement.setReadBigInts(true);
      return statement;
    };
    this.#list = [
      [listing(''), listing('WHERE tag = :tag')],
      [listing('WHERE id > :after'), listing('WHERE tag = :tag AND id > :after')],
    ];
  }

  /** Opens (creating if needed) the store under `dataDir`; throws DataDirInUseError if another process has it. */
  static open(dataDir: string): SqlitePlantStore {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, SQLITE_FILE_NAME);
    try {
      return new SqlitePlantStore(openDatabase(path));
    } catch (error) {
      if (isBusy(error)) {
        throw new DataDirInUseError(
          `The data directory ${dataDir} is in use by another Plant Store process; stop it or set PLANT_DATA_DIR to another directory.`,
        );
      }
      throw error;
    }
  }

  create(plant: StoredPlant): Promise<CreateOutcome> {
    return this.#write(() => this.#createInTransaction(plant));
  }

  delete(id: bigint): Promise<boolean> {
    return this.#write(() => this.#delete.run(id).changes === 1);
  }

  #write<T>(run: () => T): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('The store is closed.'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, resolve: resolve as (result: unknown) => void, reject });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        // setImmediate lets every request already read in this turn of the event loop join the batch.
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushScheduled = false;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 0) return;
    let results: unknown[];
    try {
      this.#db.exec('BEGIN IMMEDIATE');
      try {
        results = batch.map(({ run }) => run());
        this.#db.exec('COMMIT');
      } catch (error) {
        if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
        throw error;
      }
    } catch (error) {
      const failure = new StoreUnavailableError('The embedded database could not commit the write.', { cause: error });
      for (const pending of batch) pending.reject(failure);
      return;
    }
    for (const [index, pending] of batch.entries()) pending.resolve(results[index]);
  }

  #createInTransaction(plant: StoredPlant): CreateOutcome {
    const { changes } = this.#insert.run(plant.id, plant.name, plant.tag ?? null);
    if (changes === 1) return { outcome: 'created', plant };
    const existing = toPlant(this.#select.get(plant.id) as Row);
    return samePlant(existing, plant) ? { outcome: 'replayed', plant: existing } : { outcome: 'conflict', existing };
  }

  async get(id: bigint): Promise<StoredPlant | undefined> {
    const row = this.#select.get(id) as Row | undefined;
    return row && toPlant(row);
  }

  async list({ after, limit, tag }: ListOptions): Promise<StoredPlant[]> {
    const statement = this.#list[after === undefined ? 0 : 1]?.[tag === undefined ? 0 : 1] as StatementSync;
    const parameters: Record<string, bigint | number | string> = { limit };
    if (after !== undefined) parameters.after = after;
    if (tag !== undefined) parameters.tag = tag;
    return (statement.all(parameters) as Row[]).map(toPlant);
  }

  async health(): Promise<void> {
    if (this.#closed) throw new StoreUnavailableError('The store is closed.');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#flush();
    this.#db.close();
  }
}
