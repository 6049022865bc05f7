import type { DatabaseSync } from 'node:sqlite';
import type { WebhookEventType } from '@org/plant-contract';
import type { plantStatements } from './plants.ts';
import type { requestStatements } from './requests.ts';
import type { webhookStatements } from './webhook-statements.ts';

/** What a handler runs with on the database thread: the database, its statements, the batch's state. */
export type Thread = {
  db: DatabaseSync;
  plants: ReturnType<typeof plantStatements>;
  webhooks: ReturnType<typeof webhookStatements>;
  requests: ReturnType<typeof requestStatements>;
  /** The batch's time (Unix ms): plants and announcements keep this thread's clock. */
  now: number;
  /** Opens the batch's transaction, once, before its first write. */
  beginWrite(): void;
  /**
   * The event types some enabled endpoint receives: an operation announces only those, so that a
   * create or a delete with no subscriber costs no extra statement.
   */
  receiving: ReadonlySet<WebhookEventType>;
  /** Set by an operation that changed endpoints: `receiving` is read again after the batch. */
  endpointsChanged: boolean;
  /** Set by `close`: the database closes after the batch. */
  closing: boolean;
};

/**
 * One operation: `arity` arguments (held to `run`'s by its type); whether it writes (its result is
 * dropped when the batch rolls back); whether it is the outbox's work, sent in that lane's batches
 * (see `DatabaseThread`); whether it may announce an event (its result is then `'announced'` when
 * it did, and the store wakes the delivery loop). A result is never undefined: that marks a write
 * rolled back (BatchReply).
 */
export type Operation<A extends unknown[], R, I, T> = {
  arity: A['length'];
  writes: boolean;
  outbox: boolean;
  announces: boolean;
  run: (thread: Thread, ...args: A) => R;
  /** Turns the result into the answer, with the `input` the store kept (it saves a closure per call). */
  decode: (input: I, result: R) => T;
};

const asIs = <R>(_: unknown, result: R): R => result;

/**
 * An operation whose answer is its result as it came, unless it says how to decode it. Every
 * operation is built with the same properties in the same order: one shape, so that looking one up
 * on the create path stays monomorphic.
 */
export const operation = <A extends unknown[], R, I = undefined, T = R>({
  arity,
  writes,
  outbox,
  announces,
  run,
  decode = asIs as (input: I, result: R) => T,
}: Omit<Operation<A, R, I, T>, 'decode'> & { decode?: (input: I, result: R) => T }): Operation<A, R, I, T> => ({
  arity,
  writes,
  outbox,
  announces,
  run,
  decode,
});
