import type { MessagePort } from 'node:worker_threads';
import type { StoreSpan } from '../../ops/tracing-hooks.ts';
import type { Operation, Thread } from './operation.ts';
import { plantOperations } from './plants.ts';
import { requestOperations } from './requests.ts';
import { webhookOperations } from './webhooks.ts';

/**
 * What the store's side (DatabaseThread) and the database thread say to each other. A batch travels as
 * one flat array of operation codes, each followed by its arguments, and comes back as one flat
 * array of results: cloning a flat array of primitives is the cheapest postMessage there is.
 *
 * Every operation is one entry of a feature's table (plants.ts, webhooks.ts): what it does on the
 * thread (`run`, over statements prepared once), and how the store turns its result into the answer
 * (`decode`). Its arguments and result are the types of `run`; its code is its place in OPERATIONS.
 */

const TABLE = { ...plantOperations, ...webhookOperations, ...requestOperations };

type Table = typeof TABLE;
export type OpName = keyof Table;
export type OpArgs<K extends OpName> = Table[K] extends Operation<infer A, infer _R, infer _I, infer _T> ? A : never;
export type OpResult<K extends OpName> = ReturnType<Table[K]['run']>;
export type OpInput<K extends OpName> = Parameters<Table[K]['decode']>[0];
export type OpAnswer<K extends OpName> = ReturnType<Table[K]['decode']>;

/** An operation as the wire and the dispatch see it, whatever its types. */
export type WireOperation = {
  name: OpName;
  code: number;
  arity: number;
  writes: boolean;
  outbox: boolean;
  announces: boolean;
  run: (thread: Thread, ...args: unknown[]) => unknown;
  decode: (input: unknown, result: unknown) => unknown;
};

/** Every operation by name, each with its code on the wire. */
export const OPERATIONS = Object.fromEntries(
  Object.entries(TABLE).map(([name, { arity, writes, outbox, announces, run, decode }], code) => [
    name,
    { arity, writes, outbox, announces, run, decode, name, code },
  ]),
) as unknown as { [K in OpName]: Table[K] & { name: K; code: number } };

/** The operations by code: the thread's dispatch table. */
export const OPERATIONS_BY_CODE: readonly WireOperation[] = Object.values(OPERATIONS) as unknown as WireOperation[];

/**
 * The reply to a batch: `[failure, result, result, …]`, one result per op in order. `failure` is
 * null when the batch committed; otherwise its writes were rolled back and their results are undefined
 * (reads still answer, from what is committed).
 */
export type BatchReply = [ErrorDescription | null, ...unknown[]];

/** An error as it can cross threads: structured clone would drop SQLite's `errcode` and `errstr`. */
export type ErrorDescription = { message: string; stack?: string; code?: string; errcode?: number; errstr?: string };

/** The thread's first message: whether it opened the database. */
export type StartupMessage =
  | { startup: 'ready' }
  | { startup: 'in-use' }
  | { startup: 'failed'; failure: ErrorDescription };

export type ThreadData = { dataDir: string; path: string };

/**
 * Sent on the thread's own port: from then on `port` carries batches too, answered on it. It lets
 * another thread (the webhook delivery thread) use the database without passing through the thread
 * that opened it.
 */
export type AttachMessage = { attach: MessagePort };

/**
 * How the feature modules submit their operations to the store's batches (DatabaseThread): with
 * the `input` their decode takes and the operation's span when traced; `call` with neither;
 * `submitLarge` for an operation whose result may take up to `bytes` (see BATCH_RESULT_BYTES).
 */
export type Batches = {
  submit<K extends OpName>(
    op: K,
    span: StoreSpan | undefined,
    input: OpInput<K>,
    ...args: OpArgs<K>
  ): Promise<OpAnswer<K>>;
  call<K extends OpName>(op: K, ...args: OpArgs<K>): Promise<OpAnswer<K>>;
  submitLarge<K extends OpName>(
    bytes: number,
    op: K,
    span: StoreSpan | undefined,
    input: OpInput<K>,
    ...args: OpArgs<K>
  ): Promise<OpAnswer<K>>;
};
