import { AsyncLocalStorage } from 'node:async_hooks';
import { connect } from 'node:net';
import type pg from 'pg';
import { StoreUnavailableError } from '../plant-store.ts';

/**
 * What the store's operations ask of the database: one statement at a time, each on whatever
 * connection the pool lends. A node-postgres pool has this shape; so does a deadline pool.
 */
export type Queryable = {
  // biome-ignore lint/suspicious/noExplicitAny: node-postgres' own default for rows nobody typed.
  query<R extends pg.QueryResultRow = any>(
    config: string | pg.QueryConfig,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
};

/** The operation's deadline failed it: unavailable for now (503), as the database that stalled. */
export class DeadlineExceededError extends StoreUnavailableError {}

/** A cancel request to a server that does not take it within this is given up (the server may be frozen). */
const CANCEL_TIMEOUT_MS = 5_000;
/** The protocol's CancelRequest code (PostgreSQL's protocol, "Canceling Requests in Progress"). */
const CANCEL_REQUEST_CODE = 80_877_102;

/** When the store operation of this async context must be over, in ms since the epoch. */
const deadlines = new AsyncLocalStorage<number>();

/** The deadline of the operation running now, if any. */
export const currentDeadline = (): number | undefined => deadlines.getStore();

/** Runs `operation` with `at` as its deadline: every statement it runs through a deadline pool keeps it. */
export const withDeadline = <T>(at: number, operation: () => Promise<T>): Promise<T> => deadlines.run(at, operation);

const late = (what: string, deadlineMs: number) =>
  new DeadlineExceededError(`The PostgreSQL database did not ${what} within the store's ${deadlineMs} ms deadline.`);

/**
 * Asks the server to cancel what the connection's backend runs: the protocol's CancelRequest, on a
 * connection of its own, which the server reads before any authentication. Best effort: a server
 * that does not answer has its own statement timeout.
 */
const cancelOnServer = (client: pg.PoolClient): void => {
  const { processID, secretKey } = client as unknown as { processID: number | null; secretKey: number | null };
  if (processID === null || secretKey === null) return;
  const request = Buffer.alloc(16);
  request.writeInt32BE(16, 0);
  request.writeInt32BE(CANCEL_REQUEST_CODE, 4);
  request.writeInt32BE(processID, 8);
  request.writeInt32BE(secretKey, 12);
  const socket = client.host.startsWith('/')
    ? connect(`${client.host}/.s.PGSQL.${client.port}`)
    : connect(client.port, client.host);
  socket.setTimeout(CANCEL_TIMEOUT_MS, () => socket.destroy());
  socket.on('error', () => {});
  socket.end(request);
};

/** A Queryable that can also run statements in one transaction, on one connection. */
export type DeadlinePool = Queryable & {
  /**
   * Runs `work` in a transaction on one connection, committed once it resolves, rolled back if it
   * throws; the wait for the connection and every statement end by the operation's deadline.
   */
  transaction<T>(work: (transaction: Queryable) => Promise<T>): Promise<T>;
};

/** A connection of `pool` by `at`; one lent after it goes straight back. */
const lend = async (pool: pg.Pool, at: number, deadlineMs: number): Promise<pg.PoolClient> => {
  // Spent already (waiting for an earlier write of the same id, or for the statement before).
  if (Date.now() >= at) throw late('answer', deadlineMs);
  const connecting = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      connecting,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(late('lend a connection', deadlineMs)), Math.max(0, at - Date.now()));
      }),
    ]);
  } catch (error) {
    if (error instanceof DeadlineExceededError)
      connecting.then(
        (lent) => lent.release(),
        () => {},
      );
    throw error;
  } finally {
    clearTimeout(timer);
  }
};

/**
 * A lent connection's statements, each ending by `at`: past it, the statement fails with
 * DeadlineExceededError and is cancelled on the server, so that it neither holds its connection nor
 * goes on working for nobody. A lent connection that breaks (the server killed, the network gone)
 * reports it as an 'error' event, which the pool listens to only while the connection is idle:
 * unheard, it would end the process. Heard here, as pool.query does; `release` hands it back,
 * closed rather than lent again when it broke or `failed` says so.
 */
const lentConnection = (client: pg.PoolClient, at: number, deadlineMs: number) => {
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  /** The statement as the server answers it, and the same ending by `at`. */
  const run = (config: string | pg.QueryConfig, values?: unknown[]) => {
    if (Date.now() >= at) {
      const failed = Promise.reject(late('answer', deadlineMs));
      return { running: failed, answered: failed };
    }
    let timer: NodeJS.Timeout | undefined;
    const running = client.query(config, values);
    const answered = Promise.race([
      running,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(late('answer', deadlineMs)), Math.max(0, at - Date.now()));
      }),
    ])
      .catch((error: unknown) => {
        if (error instanceof DeadlineExceededError) cancelOnServer(client);
        throw error;
      })
      .finally(() => clearTimeout(timer));
    return { running, answered };
  };
  const release = (failed?: Error) => {
    client.off('error', onError);
    client.release(failed ?? broken);
  };
  return { run, release };
};

/**
 * A pool whose statements end by the deadline of the store operation that runs them (withDeadline,
 * else `deadlineMs` from when the statement is asked): the wait for a connection and the statement
 * together. A statement past it is cancelled on the server (see lentConnection); its connection
 * goes back to the pool once the server has answered (node-postgres' own client timeout bounds
 * that wait).
 */
export const deadlinePool = (pool: pg.Pool, deadlineMs: number): DeadlinePool => {
  const deadline = () => deadlines.getStore() ?? Date.now() + deadlineMs;
  return {
    async query(config, values) {
      const at = deadline();
      const connection = lentConnection(await lend(pool, at, deadlineMs), at, deadlineMs);
      const { running, answered } = connection.run(config, values);
      // Released once the statement has ended however it ends, not at the deadline: a connection
      // whose statement failed is closed rather than lent again, as pool.query does.
      running.then(
        () => connection.release(),
        (error: Error) => connection.release(error),
      );
      return answered;
    },
    async transaction(work) {
      const at = deadline();
      const connection = lentConnection(await lend(pool, at, deadlineMs), at, deadlineMs);
      const query: Queryable['query'] = (config, values) => connection.run(config, values).answered;
      try {
        await query('BEGIN');
        const result = await work({ query });
        await query('COMMIT');
        connection.release();
        return result;
      } catch (error) {
        // Closed, not rolled back: a statement cancelled at the deadline may still hold the session,
        // and closing rolls back on the server all the same. Rare; it costs one connect.
        connection.release(error as Error);
        throw error;
      }
    },
  };
};
