/**
 * The thread that owns the embedded database: every SQLite call, and the fsync of every commit,
 * happens here so that the HTTP thread never waits on the disk. A batch is dispatched operation by
 * operation through the protocol's table (plants.ts, webhooks.ts hold the handlers). Its imports
 * stay this small on purpose: the thread starts while the service starts.
 */
import { mkdirSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { sqliteMigrations } from './migrations.ts';
import type { Thread } from './operation.ts';
import { plantStatements } from './plants.ts';
import {
  type AttachMessage,
  type BatchReply,
  type ErrorDescription,
  OPERATIONS_BY_CODE,
  type StartupMessage,
  type ThreadData,
  type WireOperation,
} from './protocol.ts';
import { requestStatements } from './requests.ts';
import { webhookStatements } from './webhook-statements.ts';

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
    // The exclusive lock makes this the only process on the file: a lease left by a process that
    // died is nobody's, and its deliveries are due again at once.
    db.prepare(
      `UPDATE webhook_deliveries SET lease_until = NULL, lease_token = NULL, next_attempt_at = ?
       WHERE status = 'pending' AND lease_token IS NOT NULL`,
    ).run(Date.now());
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
};

/** Returns the function that runs one batch: its writes in one transaction, one commit for all. */
const batchRunner = (db: DatabaseSync): ((ops: unknown[]) => BatchReply) => {
  // Prepared once: db.exec parses its SQL at every call, twice per batch.
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const webhooks = webhookStatements(db);
  const thread: Thread = {
    db,
    plants: plantStatements(db),
    webhooks,
    requests: requestStatements(db),
    now: 0,
    beginWrite: () => {
      if (!db.isTransaction) begin.run();
    },
    // Endpoints change only here; it is read again after each batch that touched them, committed or not.
    receiving: webhooks.receivedTypes(),
    endpointsChanged: false,
    closing: false,
  };

  /** The operation whose code is at `ops[at]`. */
  const operationAt = (ops: unknown[], at: number): WireOperation => {
    const operation = OPERATIONS_BY_CODE[ops[at] as number];
    if (operation === undefined) throw new Error(`Unknown operation code ${String(ops[at])}.`);
    return operation;
  };

  /** Runs `operation`, whose code is at `ops[at]`, with the arguments that follow it. */
  const runAt = (ops: unknown[], at: number, { run, arity }: WireOperation): unknown =>
    run(thread, ...ops.slice(at + 1, at + 1 + arity));

  return (ops) => {
    let reply: BatchReply = [null];
    thread.now = Date.now();
    try {
      for (let at = 0; at < ops.length; ) {
        const operation = operationAt(ops, at);
        reply.push(runAt(ops, at, operation));
        at += 1 + operation.arity;
      }
      if (db.isTransaction) commit.run();
    } catch (error) {
      // A ROLLBACK that fails leaves a connection nobody should trust: it throws on, the thread
      // dies, and the store answers unavailable until it has started the thread again.
      if (db.isTransaction) db.exec('ROLLBACK');
      // No write of this batch is acknowledged. Reads answer again from what is committed, so a
      // full disk refuses writes but keeps serving reads.
      reply = [describeError(error)];
      for (let at = 0; at < ops.length; ) {
        const operation = operationAt(ops, at);
        at += 1 + operation.arity;
        if (operation.writes) {
          reply.push(undefined);
          continue;
        }
        try {
          reply.push(runAt(ops, at - 1 - operation.arity, operation));
        } catch {
          reply.push(undefined);
        }
      }
    }
    if (thread.endpointsChanged && !thread.closing) {
      thread.endpointsChanged = false;
      thread.receiving = webhooks.receivedTypes();
    }
    if (thread.closing) db.close();
    return reply;
  };
};

const start = (port: MessagePort, { dataDir, path }: ThreadData): void => {
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
  const serve = (channel: MessagePort) =>
    channel.on('message', (message: unknown[] | AttachMessage) => {
      if (Array.isArray(message)) channel.postMessage(runBatch(message));
      else serve(message.attach);
    });
  serve(port);
  port.postMessage({ startup: 'ready' } satisfies StartupMessage);
};

start(parentPort as MessagePort, workerData as ThreadData);
