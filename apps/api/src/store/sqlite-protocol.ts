/**
 * What SqlitePlantStore (main thread) and its database worker say to each other. A batch travels as
 * one flat array of op codes, each followed by its arguments, and comes back as one flat array of
 * results: cloning a flat array of primitives is the cheapest postMessage there is.
 */
export const Op = {
  /** id, name, tag | null → true when inserted, else the stored [name, tag]. */
  create: 0,
  /** id → whether a row was deleted. */
  delete: 1,
  /** id → the stored [name, tag], or null. */
  get: 2,
  /** after | null, limit, tag | null → [id, name, tag, id, name, tag, …]. */
  list: 3,
  /** → true. */
  health: 4,
  /** → true, once the database is closed; always the last op the store sends. */
  close: 5,
  /** id, url, description | null, secret, createdAt (ms), most endpoints → whether it was registered. */
  createEndpoint: 6,
  /** → endpoint rows, oldest first. */
  listEndpoints: 7,
  /** id → the endpoint row, or null. */
  getEndpoint: 8,
  /**
   * id, batch → null when there is no such endpoint; else disables it and deletes up to `batch` of
   * its deliveries, then the endpoint once none is left: true when deleted, false to ask again.
   */
  deleteEndpoint: 9,
  /** endpoint id, limit → delivery rows newest first, or null when there is no such endpoint. */
  listDeliveries: 10,
  /** now (ms), limit, lease until (ms), lease token, per endpoint, [endpoint id, in flight, …] → claimed delivery rows. */
  claimDue: 11,
  /**
   * now (ms), [seq, lease token, outcome, status | null, error | null, next attempt (ms) | null,
   * endpoint id, …] → whether each lease held, in order (then its endpoint's failing streak starts
   * or ends).
   */
  recordAttempts: 12,
  /** → [pending count, oldest created_at (ms) | null]. */
  backlog: 13,
  /** finished before (ms), limit → how many finished deliveries were deleted. */
  pruneFinished: 14,
  /**
   * last event seq | null (the newest) → fans out a bounded batch of events up to it: null once
   * none up to it is left, else the seq to ask again with.
   */
  fanOut: 15,
  /** id, reason, failing since (ms) | null → whether the endpoint was disabled now. */
  disableEndpoint: 16,
} as const;

export type Op = (typeof Op)[keyof typeof Op];

/** How many arguments follow each op code, by op code. */
export const OP_ARGUMENTS: readonly number[] = [3, 1, 1, 3, 0, 0, 6, 0, 1, 2, 2, 6, 2, 0, 2, 1, 3];

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

export type ClaimedRow = {
  id: string;
  seq: bigint;
  endpoint_id: string;
  url: string;
  secret: string;
  plant_id: bigint;
  name: string;
  tag: string | null;
  attempts: number | bigint;
  created_at: number | bigint;
};
