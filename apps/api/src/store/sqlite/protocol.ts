import type { MessagePort } from 'node:worker_threads';
/**
 * What SqlitePlantStore (main thread) and its database worker say to each other. A batch travels as
 * one flat array of operation codes, each followed by its arguments, and comes back as one flat
 * array of results: cloning a flat array of primitives is the cheapest postMessage there is.
 */
/**
 * Every operation the store sends its database worker: its arguments and its result as they cross
 * between the threads (a result is never undefined: that marks a write rolled back, see BatchReply).
 * The argument counts, the store's submit signature and the worker's handlers are all derived from
 * this table, so an operation whose arguments change fails the typecheck wherever it is used.
 */
export type Operations = {
  /**
   * `true` when stored, `'announced'` when stored and announced to the webhook outbox (with the
   * create's traceparent, when traced), else the row met.
   */
  create: {
    args: [id: bigint, name: string, tag: string | null, traceparent: string | null];
    result: true | 'announced' | PlantRow;
  };
  /** → whether a row was deleted. */
  delete: { args: [id: bigint]; result: boolean };
  /** → the stored [name, tag], or null. */
  get: { args: [id: bigint]; result: PlantRow | null };
  /** → [id, name, tag, id, name, tag, …], bounded by `maxBytes` as ListOptions says. */
  list: {
    args: [after: bigint | null, limit: number, tag: string | null, maxBytes: number];
    result: (bigint | string | null)[];
  };
  health: { args: []; result: true };
  /** → true, once the database is closed; always the last operation the store sends. */
  close: { args: []; result: true };
  /**
   * → its createdAt (Unix ms, this thread's clock) when registered; false when `most` endpoints exist
   * already; else the id of the endpoint that has the URL (the unique index refused it).
   */
  createEndpoint: {
    args: [id: string, url: string, description: string | null, secret: string, most: number];
    result: number | false | string;
  };
  /**
   * Changes what is not null (`setDescription` 1: the description, null removing it) → the
   * endpoint's row; null when there is none; else the id of the endpoint that has the URL.
   */
  updateEndpoint: {
    args: [id: string, url: string | null, setDescription: number, description: string | null, enabled: number | null];
    result: EndpointRow | string | null;
  };
  /** → whether the endpoint exists (its secret is then `secret`, the current one signing too until `until`). */
  rotateSecret: { args: [id: string, secret: string, until: number]; result: boolean };
  /** → how many failed deliveries created at or after `since` are pending again, due now. */
  requeueFailed: { args: [endpointId: string, since: number, limit: number, now: number]; result: number };
  /** → whether the delivery exists (it is then pending and due now). */
  retryDelivery: { args: [endpointId: string, deliveryId: string, now: number]; result: boolean };
  /** → every endpoint's secrets as stored. */
  endpointSecrets: { args: []; result: SecretsRow[] };
  /** → whether the stored secret was still `from` (it is then `to`). */
  replaceSecret: {
    args: [id: string, which: 'secret' | 'previousSecret', from: string, to: string];
    result: boolean;
  };
  /** → endpoint rows, oldest first. */
  listEndpoints: { args: []; result: EndpointRow[] };
  getEndpoint: { args: [id: string]; result: EndpointRow | null };
  /**
   * → null when there is no such endpoint; else disables it and deletes up to `batch` of its
   * deliveries, then the endpoint once none is left: true when deleted, false to ask again.
   */
  deleteEndpoint: { args: [id: string, batch: number]; result: boolean | null };
  /** → delivery rows newest first, or null when there is no such endpoint. */
  listDeliveries: { args: [endpointId: string, limit: number]; result: DeliveryRow[] | null };
  /** → claimed delivery rows; `room` is [endpoint id, most to claim of it, …], `perEndpoint` for the others. */
  claimDue: {
    args: [
      now: number,
      limit: number,
      leaseUntil: number,
      leaseToken: string,
      perEndpoint: number,
      room: (string | number)[],
    ];
    result: ClaimedRow[];
  };
  /**
   * `records` is [seq, lease token, outcome, status | null, error | null, next attempt (ms) | null,
   * endpoint id, …] → whether each lease held, in order (then its endpoint's failing streak starts
   * or ends).
   */
  recordAttempts: { args: [now: number, records: unknown[]]; result: boolean[] };
  /** → [pending count, oldest created_at (ms) | null]. */
  backlog: { args: []; result: [pending: number, oldest: number | null] };
  /** → [endpoint id, oldest pending created_at (ms), …], the oldest first, at most `limit` endpoints. */
  backlogByEndpoint: { args: [limit: number]; result: (string | number)[] };
  /** → how many finished deliveries were deleted. */
  pruneFinished: { args: [finishedBefore: number, limit: number]; result: number };
  /**
   * Fans out a bounded batch of events up to `last` (null: the newest) → null once none up to it
   * is left, else the seq to ask again with.
   */
  fanOut: { args: [last: bigint | null]; result: bigint | null };
  /** → whether the endpoint was disabled now. */
  disableEndpoint: { args: [id: string, reason: string, failingSince: number | null]; result: boolean };
};

export type OpName = keyof Operations;
export type OpArgs<K extends OpName> = Operations[K]['args'];
export type OpResult<K extends OpName> = Operations[K]['result'];

/**
 * Each operation's code on the wire, how many arguments follow it (held to the table above by its
 * type), whether it writes (its result is dropped when the batch rolls back), and whether it is the
 * outbox's work, sent in that lane's batches (see `SqlitePlantStore`).
 */
export const OPERATIONS = {
  create: { code: 0, arity: 4, writes: true, outbox: false },
  delete: { code: 1, arity: 1, writes: true, outbox: false },
  get: { code: 2, arity: 1, writes: false, outbox: false },
  list: { code: 3, arity: 4, writes: false, outbox: false },
  health: { code: 4, arity: 0, writes: false, outbox: false },
  close: { code: 5, arity: 0, writes: false, outbox: true },
  createEndpoint: { code: 6, arity: 5, writes: true, outbox: false },
  listEndpoints: { code: 7, arity: 0, writes: false, outbox: false },
  getEndpoint: { code: 8, arity: 1, writes: false, outbox: false },
  deleteEndpoint: { code: 9, arity: 2, writes: true, outbox: true },
  listDeliveries: { code: 10, arity: 2, writes: false, outbox: false },
  claimDue: { code: 11, arity: 6, writes: true, outbox: true },
  recordAttempts: { code: 12, arity: 2, writes: true, outbox: true },
  backlog: { code: 13, arity: 0, writes: false, outbox: true },
  pruneFinished: { code: 14, arity: 2, writes: true, outbox: true },
  fanOut: { code: 15, arity: 1, writes: true, outbox: true },
  disableEndpoint: { code: 16, arity: 3, writes: true, outbox: true },
  updateEndpoint: { code: 17, arity: 5, writes: true, outbox: false },
  rotateSecret: { code: 18, arity: 3, writes: true, outbox: false },
  requeueFailed: { code: 19, arity: 4, writes: true, outbox: false },
  retryDelivery: { code: 20, arity: 3, writes: true, outbox: false },
  endpointSecrets: { code: 21, arity: 0, writes: false, outbox: false },
  replaceSecret: { code: 22, arity: 4, writes: true, outbox: false },
  backlogByEndpoint: { code: 23, arity: 1, writes: false, outbox: true },
} as const satisfies {
  [K in OpName]: { code: number; arity: OpArgs<K>['length']; writes: boolean; outbox: boolean };
};

/** The operations by code: what the worker decodes a batch with. */
export const OPERATIONS_BY_CODE: readonly { name: OpName; arity: number; writes: boolean }[] = Object.entries(
  OPERATIONS,
)
  .sort(([, a], [, b]) => a.code - b.code)
  .map(([name, { arity, writes }]) => ({ name: name as OpName, arity, writes }));

export type PlantRow = [name: string, tag: string | null];

/**
 * The reply to a batch: `[failure, result, result, …]`, one result per op in order. `failure` is
 * null when the batch committed; otherwise its writes were rolled back and their results are undefined
 * (reads still answer, from what is committed).
 */
export type BatchReply = [ErrorDescription | null, ...unknown[]];

/** An error as it can cross threads: structured clone would drop SQLite's `errcode` and `errstr`. */
export type ErrorDescription = { message: string; stack?: string; code?: string; errcode?: number; errstr?: string };

/** The worker's first message: whether it opened the database. */
export type StartupMessage =
  | { startup: 'ready' }
  | { startup: 'in-use' }
  | { startup: 'failed'; failure: ErrorDescription };

export type WorkerData = { dataDir: string; path: string };

/**
 * Sent on the worker's own port: from then on `port` carries batches too, answered on it. It lets
 * another thread (the webhook delivery thread) use the database without passing through the thread
 * that opened it.
 */
export type AttachMessage = { attach: MessagePort };

export type EndpointRow = {
  id: string;
  url: string;
  description: string | null;
  enabled: number | bigint;
  disabled_reason: string | null;
  created_at: number | bigint;
};

export type DeliveryRow = {
  id: string;
  seq: bigint;
  endpoint_id: string;
  plant_id: bigint;
  status: string;
  attempts: number | bigint;
  last_status: number | bigint | null;
  last_error: string | null;
  next_attempt_at: number | bigint | null;
  delivered_at: number | bigint | null;
  created_at: number | bigint;
};

/**
 * A claimed delivery as the worker sends it: an array, not an object. node:sqlite's rows are
 * dictionary objects, slow to serialize, and the structured clone that carries them to the delivery
 * thread rebuilds each object property by property, map transition after map transition.
 */
export type ClaimedRow = [
  id: string,
  seq: bigint,
  endpointId: string,
  url: string,
  secret: string,
  previousSecret: string | null,
  plantId: bigint,
  name: string,
  tag: string | null,
  attempts: number | bigint,
  createdAt: number | bigint,
  traceparent: string | null,
];

export type SecretsRow = { id: string; secret: string; previous_secret: string | null };
