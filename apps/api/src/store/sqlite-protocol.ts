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
} as const;

export type Op = (typeof Op)[keyof typeof Op];

/** How many arguments follow each op code, by op code. */
export const OP_ARGUMENTS: readonly number[] = [3, 1, 1, 3, 0, 0];

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
