/**
 * The thread that owns the embedded database: every SQLite call, and the fsync of every commit,
 * happens here so that the HTTP thread never waits on the disk. Its imports stay this small on
 * purpose: the worker starts while the service starts.
 */
import { mkdirSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { sqliteMigrations } from './sqlite-migrations.ts';
import {
  type BatchReply,
  type ErrorDescription,
  OP_ARGUMENTS,
  Op,
  type StartupMessage,
  type WorkerData,
} from './sqlite-protocol.ts';

const SQLITE_BUSY = 5;

const describeError = (error: unknown): ErrorDescription => {
  const { message, stack, code, errcode, errstr } = error as Partial<ErrorDescription>;
  const description: ErrorDescription = { message: String(message ?? error) };
  if (stack !== undefined) description.stack = stack;
  if (code !== undefined) description.code = code;
  if (errcode !== undefined) description.errcode = errcode;
  if (errstr !== undefined) description.errstr = errstr;
  return description;
};

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

/** Returns the function that runs one batch: its writes in one transaction, one commit for all. */
const batchRunner = (db: DatabaseSync): ((ops: unknown[]) => BatchReply) => {
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
  const select = db.prepare('SELECT name, tag FROM plants WHERE id = ?');
  select.setReturnArrays(true);
  const remove = db.prepare('DELETE FROM plants WHERE id = ?');
  const listing = (where: string) => {
    const statement = db.prepare(`SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT :limit`);
    statement.setReadBigInts(true);
    statement.setReturnArrays(true);
    return statement;
  };
  /** Listing statements by [has cursor][has tag]. */
  const lists = [
    [listing(''), listing('WHERE tag = :tag')],
    [listing('WHERE id > :after'), listing('WHERE tag = :tag AND id > :after')],
  ] as const;
  let closing = false;

  const beginWrite = () => {
    if (!db.isTransaction) db.exec('BEGIN IMMEDIATE');
  };

  const list = (after: bigint | null, limit: number, tag: string | null): unknown[] => {
    const parameters: Record<string, bigint | number | string> = { limit };
    if (after !== null) parameters.after = after;
    if (tag !== null) parameters.tag = tag;
    const rows = lists[after === null ? 0 : 1][tag === null ? 0 : 1].all(parameters) as unknown as unknown[][];
    return rows.flat();
  };

  /** Runs the op at `ops[at]`. */
  const run = (ops: unknown[], at: number): unknown => {
    switch (ops[at]) {
      case Op.create: {
        beginWrite();
        const id = ops[at + 1] as bigint;
        return insert.run(id, ops[at + 2] as string, ops[at + 3] as string | null).changes === 1 || select.get(id);
      }
      case Op.delete:
        beginWrite();
        return remove.run(ops[at + 1] as bigint).changes === 1;
      case Op.get:
        return select.get(ops[at + 1] as bigint) ?? null;
      case Op.list:
        return list(ops[at + 1] as bigint | null, ops[at + 2] as number, ops[at + 3] as string | null);
      case Op.health:
        return true;
      case Op.close:
        closing = true;
        return true;
      default:
        throw new Error(`Unknown op ${String(ops[at])}.`);
    }
  };

  const isWrite = (op: unknown) => op === Op.create || op === Op.delete;

  return (ops) => {
    let reply: BatchReply = [null];
    try {
      for (let at = 0; at < ops.length; at += 1 + (OP_ARGUMENTS[ops[at] as Op] as number)) reply.push(run(ops, at));
      if (db.isTransaction) db.exec('COMMIT');
    } catch (error) {
      // A ROLLBACK that fails leaves a connection nobody should trust: it throws on, the worker
      // dies, and the store reports itself unavailable until the service restarts.
      if (db.isTransaction) db.exec('ROLLBACK');
      // No write of this batch is acknowledged. Reads answer again from what is committed, so a
      // full disk refuses writes but keeps serving reads.
      reply = [describeError(error)];
      for (let at = 0; at < ops.length; at += 1 + (OP_ARGUMENTS[ops[at] as Op] as number)) {
        if (isWrite(ops[at])) {
          reply.push(undefined);
          continue;
        }
        try {
          reply.push(run(ops, at));
        } catch {
          reply.push(undefined);
        }
      }
    }
    if (closing) db.close();
    return reply;
  };
};

const start = (port: MessagePort, { dataDir, path }: WorkerData): void => {
  let db: DatabaseSync;
  try {
    mkdirSync(dataDir, { recursive: true });
    db = openDatabase(path);
  } catch (error) {
    const busy = (error as { errcode?: number } | null)?.errcode === SQLITE_BUSY;
    port.postMessage(
      (busy ? { startup: 'in-use' } : { startup: 'failed', failure: describeError(error) }) satisfies StartupMessage,
    );
    return;
  }
  const runBatch = batchRunner(db);
  port.on('message', (ops: unknown[]) => port.postMessage(runBatch(ops)));
  port.postMessage({ startup: 'ready' } satisfies StartupMessage);
};

start(parentPort as MessagePort, workerData as WorkerData);
