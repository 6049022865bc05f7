/**
 * The thread that owns the embedded database: every SQLite call, and the fsync of every commit,
 * happens here so that the HTTP thread never waits on the disk. Its imports stay this small on
 * purpose: the worker starts while the service starts.
 */
import { mkdirSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { DISABLED_BY_REQUEST, parseDeliveryId } from '../webhook-store.ts';
import { sqliteMigrations } from './migrations.ts';
import {
  type AttachMessage,
  type BatchReply,
  type ClaimedRow,
  type DeliveryRow,
  type EndpointRow,
  type ErrorDescription,
  OPERATIONS_BY_CODE,
  type OpArgs,
  type OpName,
  type OpResult,
  type PlantRow,
  type SecretsRow,
  type StartupMessage,
  type WorkerData,
} from './protocol.ts';

type Operation = (typeof OPERATIONS_BY_CODE)[number];

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

/** Events fanned out per delivery claimed. */
const FAN_OUT_PER_CLAIMED = 8;
/**
 * The most delivery rows one fan-out writes: a few milliseconds of this thread (measured in
 * webhook-stalls.test.ts), so that plant operations queued behind it never wait long.
 */
const FAN_OUT_ROWS = 500;

/*
 * A LIMIT taken from a parameter is written `LIMIT ? + 0`. SQLite's planner reads the value of a
 * bare `LIMIT ?`, so binding it again (every run) makes the statement parse and plan itself anew at
 * its next step: a step of the delivery claim cost 4.5 times as many instructions (callgrind), and
 * re-preparing was a fifth of this thread's work while delivering. A sum is only computed when the
 * statement runs; the plans are the same (EXPLAIN QUERY PLAN).
 */

/** The webhook statements: endpoints, and the outbox of deliveries. */
const webhookStatements = (db: DatabaseSync) => {
  const prepare = (sql: string, bigInts = false, arrays = false) => {
    const statement = db.prepare(sql);
    if (bigInts) statement.setReadBigInts(true);
    if (arrays) statement.setReturnArrays(true);
    return statement;
  };
  const enabled = prepare('SELECT 1 FROM webhook_endpoints WHERE enabled = 1 LIMIT 1');
  const endpointColumns = 'id, url, description, enabled, disabled_reason, created_at';
  const settings = db.prepare('SELECT instance, legacy_instance, legacy_upto FROM webhook_settings').get() as {
    instance: string;
    legacy_instance: string;
    legacy_upto: number;
  };
  // The deliveries kept from before seqs were AUTOINCREMENT keep the instance they were issued under.
  const legacyUpTo = BigInt(settings.legacy_upto);
  /** The instance of the delivery `seq`. */
  const instanceOf = (seq: bigint): string => (seq <= legacyUpTo ? settings.legacy_instance : settings.instance);
  const prefix = `msg_${settings.instance}_`;
  /** A delivery's webhook-id: the instance and the sequence number. */
  const webhookId = (seq: bigint): string =>
    seq <= legacyUpTo ? `msg_${settings.legacy_instance}_${seq}` : `${prefix}${seq}`;
  /**
   * Rows with their webhook-id. Set on the row, not spread into a copy: node:sqlite's rows are
   * dictionary objects, which a spread copies slowly.
   */
  const withIds = <R extends { seq: bigint }>(rows: R[]): (R & { id: string })[] =>
    rows.map((row) => {
      const withId = row as R & { id: string };
      withId.id = webhookId(row.seq);
      return withId;
    });
  return {
    instanceOf,
    webhookId,
    withIds,
    anyEnabled: () => enabled.get() !== undefined,
    // Positional: binding by name cost twice as much per create (measured).
    announce: prepare(
      'INSERT INTO webhook_events (plant_id, name, tag, created_at, traceparent) VALUES (?, ?, ?, ?, ?)',
    ),
    /** The last event of the next `limit` up to `last` to fan out, or null when there is none. */
    fanOutBound: prepare(
      'SELECT max(seq) AS upTo FROM (SELECT seq FROM webhook_events WHERE seq <= :last ORDER BY seq LIMIT :limit + 0)',
      true,
    ),
    lastEvent: prepare('SELECT max(seq) AS seq FROM webhook_events', true),
    eventUpTo: prepare('SELECT 1 FROM webhook_events WHERE seq <= ? LIMIT 1'),
    enabledCount: prepare('SELECT count(*) AS count FROM webhook_endpoints WHERE enabled = 1'),
    // An endpoint receives the plants created since it was registered.
    fanOut: prepare(
      `INSERT INTO webhook_deliveries (endpoint_id, plant_id, name, tag, next_attempt_at, created_at, traceparent)
       SELECT ep.id, e.plant_id, e.name, e.tag, e.created_at, e.created_at, e.traceparent
       FROM webhook_events e JOIN webhook_endpoints ep ON ep.enabled = 1 AND ep.created_at <= e.created_at
       WHERE e.seq <= :upTo
       ORDER BY e.seq, ep.created_at, ep.id`,
    ),
    fannedOut: prepare('DELETE FROM webhook_events WHERE seq <= :upTo'),
    eventBacklog: prepare(
      `SELECT (SELECT count(*) FROM webhook_events) * (SELECT count(*) FROM webhook_endpoints WHERE enabled = 1) AS pending,
              (SELECT created_at FROM webhook_events ORDER BY seq LIMIT 1) AS oldest`,
    ),
    // An endpoint that has the URL already: nothing is inserted (the unique index).
    createEndpoint: prepare(
      `INSERT INTO webhook_endpoints (id, url, description, secret, created_at)
       SELECT ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM webhook_endpoints) < ?
       ON CONFLICT DO NOTHING`,
    ),
    urlHolder: prepare('SELECT id FROM webhook_endpoints WHERE url = ? AND duplicate_url = 0'),
    // Enabling a disabled endpoint forgets why it was disabled and its failing streak, so that its
    // pending deliveries are claimed again and auto-disable counts afresh. The right-hand sides
    // read the row as it was.
    updateEndpoint: prepare(
      `UPDATE OR IGNORE webhook_endpoints SET
         url = coalesce(:url, url),
         duplicate_url = CASE WHEN :url IS NULL THEN duplicate_url ELSE 0 END,
         description = CASE WHEN :setDescription = 1 THEN :description ELSE description END,
         enabled = coalesce(:enabled, enabled),
         disabled_reason = CASE
           WHEN :enabled = 1 THEN NULL
           WHEN :enabled = 0 AND enabled = 1 THEN :disabledReason
           ELSE disabled_reason END,
         failing_since = CASE WHEN :enabled = 1 AND enabled = 0 THEN NULL ELSE failing_since END
       WHERE id = :id`,
    ),
    rotateSecret: prepare(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = :until, secret = :secret
       WHERE id = :id`,
    ),
    requeueFailed: prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = :now, finished_at = NULL
       WHERE seq IN (
         SELECT seq FROM webhook_deliveries
         WHERE endpoint_id = :id AND status = 'failed' AND created_at >= :since
         ORDER BY created_at LIMIT :limit + 0
       ) AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = :id AND enabled = 1)`,
    ),
    retryDelivery: prepare(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = :now, delivered_at = NULL, finished_at = NULL
       WHERE seq = :seq AND endpoint_id = :id
         AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = :id AND enabled = 1)`,
    ),
    endpointSecrets: prepare('SELECT id, secret, previous_secret FROM webhook_endpoints ORDER BY id'),
    replaceSecret: prepare('UPDATE webhook_endpoints SET secret = :to WHERE id = :id AND secret = :from'),
    replacePreviousSecret: prepare(
      'UPDATE webhook_endpoints SET previous_secret = :to WHERE id = :id AND previous_secret = :from',
    ),
    listEndpoints: prepare(`SELECT ${endpointColumns} FROM webhook_endpoints ORDER BY created_at, id`),
    getEndpoint: prepare(`SELECT ${endpointColumns} FROM webhook_endpoints WHERE id = ?`),
    deleteEndpoint: prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
    deleteDeliveries: prepare(
      'DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE endpoint_id = ? LIMIT ? + 0)',
    ),
    listDeliveries: prepare(
      `SELECT seq, endpoint_id, plant_id, status, attempts, last_status, last_error, next_attempt_at, delivered_at, created_at
       FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ? + 0`,
      true,
    ),
    claimEndpoints: prepare('SELECT id FROM webhook_endpoints WHERE enabled = 1'),
    dueOf: prepare(
      `SELECT seq, next_attempt_at AS due FROM webhook_deliveries
       WHERE endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?
       ORDER BY next_attempt_at LIMIT ? + 0`,
      true,
    ),
    lease: prepare(
      'UPDATE webhook_deliveries SET lease_until = :until, next_attempt_at = :until, lease_token = :token WHERE seq = :seq',
    ),
    // In the order of the protocol's ClaimedRow, after its webhook-id.
    claimed: prepare(
      `SELECT d.seq, d.endpoint_id, e.url, e.secret,
              CASE WHEN e.previous_secret_until > :now THEN e.previous_secret END AS previous_secret,
              d.plant_id, d.name, d.tag, d.attempts, d.created_at, d.traceparent
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.seq = :seq`,
      true,
      true,
    ),
    record: prepare(
      `UPDATE webhook_deliveries SET
         status = CASE :outcome WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'failed' END,
         attempts = attempts + 1, last_status = :status, last_error = :error, next_attempt_at = :next,
         delivered_at = CASE :outcome WHEN 'delivered' THEN :now END,
         finished_at = CASE :outcome WHEN 'retry' THEN NULL ELSE :now END, lease_until = NULL, lease_token = NULL
       WHERE seq = :seq AND lease_token = :token AND status = 'pending'`,
    ),
    disableForDeletion: prepare('UPDATE webhook_endpoints SET enabled = 0 WHERE id = ?'),
    disable: prepare(
      `UPDATE webhook_endpoints SET enabled = 0, disabled_reason = :reason
       WHERE id = :id AND enabled = 1 AND (:since IS NULL OR failing_since <= :since)`,
    ),
    // Written only when the streak starts or ends, not at every attempt.
    streakEnds: prepare('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL'),
    streakStarts: prepare('UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL'),
    pruneFinished: prepare(
      `DELETE FROM webhook_deliveries WHERE seq IN (
         SELECT seq FROM webhook_deliveries WHERE finished_at < ? ORDER BY finished_at LIMIT ? + 0
       )`,
    ),
    // A disabled endpoint's pending deliveries wait for it to be enabled again: not a backlog.
    backlog: prepare(
      `SELECT count(*) AS pending, min(d.created_at) AS oldest
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.status = 'pending' AND e.enabled = 1`,
    ),
    // The same rows by endpoint, and the events still to be fanned out: each is pending for every
    // enabled endpoint registered by then (see fanOut), the first of them its oldest.
    backlogByEndpoint: prepare(
      `SELECT id, min(oldest) AS oldest FROM (
         SELECT d.endpoint_id AS id, min(d.created_at) AS oldest
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.status = 'pending' AND e.enabled = 1
         GROUP BY d.endpoint_id
         UNION ALL
         SELECT e.id, (SELECT ev.created_at FROM webhook_events ev WHERE ev.created_at >= e.created_at ORDER BY ev.seq LIMIT 1)
         FROM webhook_endpoints e WHERE e.enabled = 1
       ) WHERE oldest IS NOT NULL GROUP BY id ORDER BY oldest, id LIMIT ?`,
    ),
  };
};

/** Returns the function that runs one batch: its writes in one transaction, one commit for all. */
const batchRunner = (db: DatabaseSync): ((ops: unknown[]) => BatchReply) => {
  const insert = db.prepare('INSERT INTO plants (id, name, tag) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
  const select = db.prepare('SELECT name, tag FROM plants WHERE id = ?');
  select.setReturnArrays(true);
  const remove = db.prepare('DELETE FROM plants WHERE id = ?');
  // A row is listed while the rows before the one before it hold fewer than :maxBytes of names and
  // tags (see ListOptions.maxBytes): the bytes are counted here, so no more than that crosses to
  // the store's thread. The window runs over the `limit` rows of the inner query only.
  const listing = (where: string) => {
    const statement = db.prepare(
      `SELECT id, name, tag FROM (
         SELECT id, name, tag, sum(octet_length(name) + coalesce(octet_length(tag), 0))
           OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) AS before
         FROM (SELECT id, name, tag FROM plants ${where} ORDER BY id LIMIT :limit + 0)
       ) WHERE before IS NULL OR before < :maxBytes ORDER BY id`,
    );
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
  const webhooks = webhookStatements(db);
  // Whether any endpoint is enabled, so that a create with no subscriber costs no extra statement.
  // Endpoints change only here; it is read again after each batch that touched them, committed or not.
  let announcing = webhooks.anyEnabled();
  let endpointsChanged = false;
  let now = 0;

  // Prepared once: db.exec parses its SQL at every call, twice per batch.
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const beginWrite = () => {
    if (!db.isTransaction) begin.run();
  };

  const list = (after: bigint | null, limit: number, tag: string | null, maxBytes: number): OpResult<'list'> => {
    const parameters: Record<string, bigint | number | string> = { limit, maxBytes };
    if (after !== null) parameters.after = after;
    if (tag !== null) parameters.tag = tag;
    const rows = lists[after === null ? 0 : 1][tag === null ? 0 : 1].all(parameters) as unknown as OpResult<'list'>[];
    return rows.flat();
  };

  /** What each operation does, with the arguments and result the protocol gives it. */
  const handlers: { [K in OpName]: (...args: OpArgs<K>) => OpResult<K> } = {
    create: (id, name, tag, traceparent) => {
      beginWrite();
      if (insert.run(id, name, tag).changes !== 1) return select.get(id) as unknown as PlantRow;
      // Same transaction as the plant: a create acknowledged is an announcement owed.
      if (!announcing) return true;
      webhooks.announce.run(id, name, tag, now, traceparent);
      return 'announced';
    },
    delete: (id) => {
      beginWrite();
      return remove.run(id).changes === 1;
    },
    get: (id) => (select.get(id) as unknown as PlantRow | undefined) ?? null,
    list,
    health: () => true,
    close: () => {
      closing = true;
      return true;
    },
    createEndpoint: (id, url, description, secret, most) => {
      beginWrite();
      endpointsChanged = true;
      // Stamped by the clock that stamps the announcements (see NewStoredEndpoint).
      if (webhooks.createEndpoint.run(id, url, description, secret, now, most).changes === 1) return now;
      const holder = webhooks.urlHolder.get(url) as { id: string } | undefined;
      return holder?.id ?? false;
    },
    updateEndpoint: (id, url, setDescription, description, enabled) => {
      beginWrite();
      endpointsChanged = true;
      const { changes } = webhooks.updateEndpoint.run({
        id,
        url,
        setDescription,
        description,
        enabled,
        disabledReason: DISABLED_BY_REQUEST,
      });
      const row = (webhooks.getEndpoint.get(id) as unknown as EndpointRow | undefined) ?? null;
      if (changes === 1 || row === null) return row;
      // OR IGNORE skipped the row: the unique URL index refused it.
      return (webhooks.urlHolder.get(url) as { id: string }).id;
    },
    rotateSecret: (id, secret, until) => {
      beginWrite();
      return webhooks.rotateSecret.run({ id, secret, until }).changes === 1;
    },
    requeueFailed: (id, since, limit, requeueNow) => {
      beginWrite();
      return Number(webhooks.requeueFailed.run({ id, since, limit, now: requeueNow }).changes);
    },
    retryDelivery: (id, deliveryId, retryNow) => {
      const parsed = parseDeliveryId(deliveryId);
      if (parsed === undefined || parsed.instance !== webhooks.instanceOf(parsed.seq)) return false;
      // A delivery id exists only once its event is fanned out: nothing to fan out first.
      beginWrite();
      return webhooks.retryDelivery.run({ id, seq: parsed.seq, now: retryNow }).changes === 1;
    },
    endpointSecrets: () => webhooks.endpointSecrets.all() as unknown as SecretsRow[],
    replaceSecret: (id, which, from, to) => {
      beginWrite();
      const statement = which === 'secret' ? webhooks.replaceSecret : webhooks.replacePreviousSecret;
      // The plain secret being sealed must not linger in the page's free space (secure_delete
      // zeroes it); the next checkpoint (at the latest, closing the store) carries that page into
      // the database file.
      db.exec('PRAGMA secure_delete = ON');
      try {
        return statement.run({ id, from, to }).changes === 1;
      } finally {
        db.exec('PRAGMA secure_delete = OFF');
      }
    },
    listEndpoints: () => webhooks.listEndpoints.all() as unknown as EndpointRow[],
    getEndpoint: (id) => (webhooks.getEndpoint.get(id) as unknown as EndpointRow | undefined) ?? null,
    deleteEndpoint: (id, batch) => {
      beginWrite();
      endpointsChanged = true;
      // Disabled first, so that nothing more is fanned out to it while its deliveries go in batches.
      if (webhooks.disableForDeletion.run(id).changes === 0) return null;
      if (Number(webhooks.deleteDeliveries.run(id, batch).changes) === batch) return false;
      webhooks.deleteEndpoint.run(id);
      return true;
    },
    listDeliveries: (id, limit) => {
      if (webhooks.getEndpoint.get(id) === undefined) return null;
      return webhooks.withIds(webhooks.listDeliveries.all(id, limit) as { seq: bigint }[]) as unknown as DeliveryRow[];
    },
    claimDue: (claimNow, limit, until, token, perEndpoint, room) => {
      beginWrite();
      // A few times what is claimed, so that fanning out keeps ahead of delivering, and stays small
      // while the worker steps back for requests.
      fanOut(FAN_OUT_PER_CLAIMED * limit);
      const claimed = claimFairly(claimNow, limit, until, token, perEndpoint, room);
      const rows: ClaimedRow[] = [];
      for (const { seq } of claimed) {
        const row = webhooks.claimed.get({ seq, now: claimNow }) as unknown as ClaimedRow | undefined;
        if (row === undefined) continue;
        // The webhook-id first, as the protocol's row has it.
        row.unshift(webhooks.webhookId(seq));
        rows.push(row);
      }
      return rows;
    },
    recordAttempts: (recordNow, records) => {
      beginWrite();
      const held: boolean[] = [];
      for (let index = 0; index < records.length; index += 7) {
        const outcome = records[index + 2] as string;
        const endpoint = records[index + 6] as string;
        const recorded =
          webhooks.record.run({
            seq: records[index] as bigint,
            token: records[index + 1] as string,
            outcome,
            status: records[index + 3] as number | null,
            error: records[index + 4] as string | null,
            next: records[index + 5] as number | null,
            now: recordNow,
          }).changes === 1;
        if (recorded) {
          if (outcome === 'delivered') webhooks.streakEnds.run(endpoint);
          else webhooks.streakStarts.run(recordNow, endpoint);
        }
        held.push(recorded);
      }
      return held;
    },
    backlog: () => {
      type Backlog = { pending: number | bigint; oldest: number | bigint | null };
      const deliveries = webhooks.backlog.get() as Backlog;
      const events = webhooks.eventBacklog.get() as Backlog;
      const oldest = [deliveries.oldest, Number(events.pending) > 0 ? events.oldest : null]
        .filter((value) => value !== null)
        .map(Number);
      return [Number(deliveries.pending) + Number(events.pending), oldest.length === 0 ? null : Math.min(...oldest)];
    },
    backlogByEndpoint: (limit) =>
      (webhooks.backlogByEndpoint.all(limit) as { id: string; oldest: number | bigint }[]).flatMap(({ id, oldest }) => [
        id,
        Number(oldest),
      ]),
    pruneFinished: (before, limit) => {
      beginWrite();
      return Number(webhooks.pruneFinished.run(before, limit).changes);
    },
    fanOut: (upTo) => {
      const last = upTo ?? (webhooks.lastEvent.get() as { seq: bigint | null }).seq;
      if (last === null) return null;
      fanOut(Number.MAX_SAFE_INTEGER, last);
      return webhooks.eventUpTo.get(last) === undefined ? null : last;
    },
    disableEndpoint: (id, reason, since) => {
      beginWrite();
      endpointsChanged = true;
      return webhooks.disable.run({ id, reason, since }).changes === 1;
    },
  };

  /** Runs the operation whose code is at `ops[at]`, with the arguments that follow it. */
  const run = (ops: unknown[], at: number, { name, arity }: Operation): unknown =>
    (handlers[name] as (...args: unknown[]) => unknown)(...ops.slice(at + 1, at + 1 + arity));

  /** The operation whose code is at `ops[at]`. */
  const operationAt = (ops: unknown[], at: number): Operation => {
    const operation = OPERATIONS_BY_CODE[ops[at] as number];
    if (operation === undefined) throw new Error(`Unknown operation code ${String(ops[at])}.`);
    return operation;
  };

  /**
   * Leases up to `limit` due deliveries, taking turns across the enabled endpoints: every
   * endpoint's oldest due delivery before any endpoint's second, each within its room.
   */
  const claimFairly = (
    now: number,
    limit: number,
    until: number,
    token: string,
    perEndpoint: number,
    room: (string | number)[],
  ): { seq: bigint }[] => {
    const listed = new Map<string, number>();
    for (let index = 0; index < room.length; index += 2) listed.set(room[index] as string, room[index + 1] as number);
    const candidates: { seq: bigint; due: bigint; turn: number }[] = [];
    for (const { id } of webhooks.claimEndpoints.all() as { id: string }[]) {
      const most = listed.get(id) ?? perEndpoint;
      if (most <= 0) continue;
      const due = webhooks.dueOf.all(id, now, Math.min(most, limit)) as { seq: bigint; due: bigint }[];
      for (const [turn, row] of due.entries()) candidates.push({ ...row, turn });
    }
    candidates.sort((a, b) => a.turn - b.turn || (a.due < b.due ? -1 : a.due > b.due ? 1 : 0));
    const chosen = candidates.slice(0, limit);
    for (const { seq } of chosen) webhooks.lease.run({ seq, until, token });
    return chosen;
  };

  /**
   * Turns up to `limit` events (up to the event `last`) into deliveries, oldest first, and never
   * more than FAN_OUT_ROWS deliveries at once.
   */
  const fanOut = (limit: number, last = BigInt(Number.MAX_SAFE_INTEGER)): void => {
    const { count } = webhooks.enabledCount.get() as { count: number };
    const events = Math.max(1, Math.min(limit, Math.floor(FAN_OUT_ROWS / Math.max(1, count))));
    const { upTo } = webhooks.fanOutBound.get({ limit: events, last }) as { upTo: bigint | null };
    if (upTo === null) return;
    beginWrite();
    webhooks.fanOut.run({ upTo });
    webhooks.fannedOut.run({ upTo });
  };

  return (ops) => {
    let reply: BatchReply = [null];
    now = Date.now();
    try {
      for (let at = 0; at < ops.length; ) {
        const operation = operationAt(ops, at);
        reply.push(run(ops, at, operation));
        at += 1 + operation.arity;
      }
      if (db.isTransaction) commit.run();
    } catch (error) {
      // A ROLLBACK that fails leaves a connection nobody should trust: it throws on, the worker
      // dies, and the store reports itself unavailable until the service restarts.
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
          reply.push(run(ops, at - 1 - operation.arity, operation));
        } catch {
          reply.push(undefined);
        }
      }
    }
    if (endpointsChanged && !closing) {
      endpointsChanged = false;
      announcing = webhooks.anyEnabled();
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
  const serve = (channel: MessagePort) =>
    channel.on('message', (message: unknown[] | AttachMessage) => {
      if (Array.isArray(message)) channel.postMessage(runBatch(message));
      else serve(message.attach);
    });
  serve(port);
  port.postMessage({ startup: 'ready' } satisfies StartupMessage);
};

start(parentPort as MessagePort, workerData as WorkerData);
