/**
 * The transport to the embedded database's thread: it starts the thread, batches the operations of
 * one event-loop turn into one message and settles their answers, keeps the outbox's work in a lane
 * of its own, bounds the results a batch asks for, hands other threads a channel to the database,
 * and restarts the thread when it stops unexpectedly. What the operations mean is the store's
 * (sqlite-store.ts and the feature modules); this module knows them only by the protocol's table.
 */
import { join } from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import type { Clock } from '../../clock.ts';
import { threadFlags } from '../../ops/thread-flags.ts';
import type { StoreSpan } from '../../ops/tracing-hooks.ts';
import { StoreUnavailableError } from '../plant-store.ts';
import {
  type AttachMessage,
  type Batches,
  type BatchReply,
  type ErrorDescription,
  OPERATIONS,
  type OpAnswer,
  type OpArgs,
  type OpInput,
  type OpName,
  type StartupMessage,
  type ThreadData,
} from './protocol.ts';

export const SQLITE_FILE_NAME = 'plants.sqlite';

// From source the thread's module is TypeScript beside this file; the build emits it as
// dist/sqlite-thread.js beside the bundle that holds this code.
const THREAD_URL = new URL(import.meta.url.endsWith('.ts') ? './thread.ts' : './sqlite-thread.js', import.meta.url);

/** Another process holds the data directory; sharing it would not be safe. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/** An operation sent (or about to be sent) to the thread; `decode` turns its result into the answer. */
type Pending = {
  decode: (input: never, result: unknown) => unknown;
  /** Whether its operation may announce an event (see Operation.announces). */
  announces: boolean;
  input: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** The operation's span, when traced: it ends with its batch. */
  span: StoreSpan | undefined;
};

/**
 * The most bytes of results one batch of requests asks the database thread for, as the operations
 * that answer many rows (listing plants or deliveries) count them: more such operations wait for
 * the next batch, so the thread's heap (`THREAD_HEAP_MB`) holds a bounded batch whatever the load.
 */
export const BATCH_RESULT_BYTES = 2 * 1024 * 1024;

/**
 * The database thread's old generation, in MiB. A batch asks for at most BATCH_RESULT_BYTES of
 * results: its worst case (seven of the largest pages, of the longest plants in four-byte
 * characters, beside 1,024 such creates) ran in a 12 MiB old generation and not in 8 MiB
 * (scripts/answer-heap.ts); 32 MiB leaves V8's collector room beyond that.
 */
const THREAD_HEAP_MB = 32;

/**
 * After the thread stopped unexpectedly, it is started again after this delay, doubled with every
 * stop in the last RESTART_WINDOW_MS; past MAX_RESTARTS of them the store gives up (see `onEvent`).
 */
export const RESTART_DELAY_MS = 100;
const RESTART_WINDOW_MS = 60_000;
export const MAX_RESTARTS = 5;

const RESTARTING = 'The embedded database stopped unexpectedly and is restarting; retry later.';

/** What happens to the database thread, for the service to log, and to exit on `gave-up`. */
export type StoreEvent =
  | { kind: 'stopped'; error: unknown }
  | { kind: 'restarted' }
  | { kind: 'gave-up'; error: unknown };

const reviveError = ({ message, stack, ...details }: ErrorDescription): Error => {
  const error = Object.assign(new Error(message), details);
  if (stack !== undefined) error.stack = stack;
  return error;
};

/**
 * The database thread as the store's side sees it. Operations of one event-loop turn travel as one
 * message; the thread runs their writes in one transaction (group commit: one fsync acknowledges
 * them all). While it commits, new operations wait here and form the next batch, so batches grow
 * with load. Reads share the queue, so a read sees every write acknowledged before it was issued.
 *
 * The webhook outbox's own work (fan-out, claims, attempts recorded, deletions and pruning in
 * batches) travels in a lane of its own: its batches alternate with those of requests, so that a
 * plant operation waits behind at most one batch of that work, never behind a queue of it.
 */
export class DatabaseThread {
  /** The database thread, or a port attached to it (see `attach`); replaced when it restarts. */
  #thread: Worker | MessagePort;
  /** Where the database is, for the store that opened it: its thread is restarted there. */
  readonly #threadData: ThreadData | undefined;
  /** Times the restarts (a test moves it). */
  readonly #clock: Clock;
  /** Operations of the next batch of requests, and that batch's message. */
  #queued: Pending[] = [];
  #message: unknown[] = [];
  /** The same for the outbox's work (see the class comment). */
  #background: Pending[] = [];
  #backgroundMessage: unknown[] = [];
  /** Whether the last batch sent was the outbox's: the next is the requests', if any wait. */
  #sentBackground = false;
  /** Close is queued last in the outbox's lane: every request queued before it goes first. */
  #closeQueued = false;
  /** The batch the thread is running; at most one at a time. */
  #sent: Pending[] | undefined;
  /** The result bytes that the next batch of requests asks for (see BATCH_RESULT_BYTES). */
  #queuedBytes = 0;
  /** Operations of many rows that did not fit in the next batch, oldest first, each with its bytes. */
  #large: { bytes: number; submit: () => void }[] = [];
  /** When the thread stopped unexpectedly, in the last RESTART_WINDOW_MS. */
  #stops: number[] = [];
  readonly #events = new Set<(event: StoreEvent) => void>();
  #flushScheduled = false;
  /** Set while the thread is down (restarting, or given up); every operation fails with it meanwhile. */
  #failure: StoreUnavailableError | undefined;
  #crash: unknown;
  #closing: Promise<void> | undefined;
  /** Called once no operation is queued or running (see #drained). */
  #onIdle: (() => void) | undefined;
  /** Called after a batch in which an operation announced an event (see Operation.announces). */
  readonly #onAnnounced: () => void;

  private constructor(thread: Worker | MessagePort, clock: Clock, onAnnounced: () => void, threadData?: ThreadData) {
    this.#thread = thread;
    this.#threadData = threadData;
    this.#clock = clock;
    this.#onAnnounced = onAnnounced;
    this.#listen(thread);
  }

  /** How the store and its feature modules submit operations (see Batches). */
  readonly batches: Batches = {
    submit: (op, span, input, ...args) => this.#submit(op, span, input, ...args),
    call: (op, ...args) => this.#submit(op, undefined, undefined as OpInput<typeof op>, ...args),
    submitLarge: (bytes, op, span, input, ...args) => this.#submitLarge(bytes, op, span, input, ...args),
  };

  #listen(thread: Worker | MessagePort): void {
    thread.on('message', (reply: unknown) => {
      // Under `node --watch`, Node also reports the thread's imports on this port, as objects.
      if (Array.isArray(reply)) this.#settle(reply as BatchReply);
    });
    if (thread instanceof Worker) {
      thread.on('error', (error) => {
        this.#crash = error;
      });
      thread.on('exit', (code) => this.#stopped(thread, code));
    } else thread.on('close', () => this.#stopped(thread, 0));
    // An idle store must not keep the process alive; pending operations hold it (see #submit).
    thread.unref();
  }

  /**
   * Tells `listener` when the database thread stops unexpectedly, when it runs again, and when the
   * store gave up restarting it (the service then exits, for its supervisor to start it afresh).
   * Returns the unsubscribe.
   */
  onEvent(listener: (event: StoreEvent) => void): () => void {
    this.#events.add(listener);
    return () => this.#events.delete(listener);
  }

  /** False while the database thread is down: restarting, or given up. */
  alive(): boolean {
    return this.#failure === undefined || this.#closing !== undefined;
  }

  /**
   * A store attached over a channel whose thread stopped is down until the store that opened the
   * database gives it a channel to the new thread (see `channel`).
   */
  reattach(port: MessagePort): void {
    if (this.#thread instanceof Worker) throw new Error('Only a store made by `attach` is reattached.');
    if (this.#closing !== undefined) {
      port.close();
      return;
    }
    // The new channel may come before the old one is seen closed: what the old one held fails.
    if (this.#failure === undefined) {
      this.#failure = new StoreUnavailableError(RESTARTING);
      this.#failPending();
    }
    this.#thread = port;
    this.#listen(port);
    this.#failure = undefined;
  }

  /**
   * A port to this store's database, for another thread to pass to `attach`: its batches go
   * straight to the database thread and take turns there with this store's.
   */
  channel(): MessagePort {
    if (!(this.#thread instanceof Worker)) throw new Error('Only the store that opened the database makes channels.');
    const { port1, port2 } = new MessageChannel();
    this.#thread.postMessage({ attach: port2 } satisfies AttachMessage, [port2]);
    return port1;
  }

  /**
   * The thread over a `channel()` of another thread's: the same database, without its ownership.
   * `close` ends the channel and leaves the database open to the thread that opened it.
   */
  static attach(port: MessagePort, clock: Clock, onAnnounced: () => void): DatabaseThread {
    return new DatabaseThread(port, clock, onAnnounced);
  }

  /** Starts a database thread on `workerData`; resolves once it opened the database. */
  static async #startThread(workerData: ThreadData): Promise<Worker> {
    const thread = new Worker(THREAD_URL, {
      name: 'plant-sqlite',
      execArgv: threadFlags(),
      // The thread holds a batch at a time (see THREAD_HEAP_MB); V8's default heap would grow to
      // tens of MiB under load.
      resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: THREAD_HEAP_MB },
      workerData,
    });
    const started = await new Promise<StartupMessage>((resolve, reject) => {
      const onMessage = (message: unknown) => {
        // Skips what `node --watch` reports on the same port.
        if ((message as Partial<StartupMessage> | null)?.startup === undefined) return;
        thread.off('message', onMessage);
        resolve(message as StartupMessage);
      };
      // The 'error' and 'exit' listeners left behind once started do nothing: the promise is settled.
      thread
        .on('message', onMessage)
        .once('error', reject)
        .once('exit', (code) => reject(new Error(`The database thread exited (code ${code}) while opening.`)));
    });
    if (started.startup === 'ready') return thread;
    await thread.terminate();
    if (started.startup === 'in-use') {
      throw new DataDirInUseError(
        `The data directory ${workerData.dataDir} is in use by another Plant Store process; stop it or set PLANT_DATA_DIR to another directory.`,
      );
    }
    throw reviveError(started.failure);
  }

  /**
   * Starts the thread on the database under `dataDir` (creating it if needed); rejects with
   * DataDirInUseError if another process has it.
   */
  static async open(dataDir: string, clock: Clock, onAnnounced: () => void): Promise<DatabaseThread> {
    const workerData: ThreadData = { dataDir, path: join(dataDir, SQLITE_FILE_NAME) };
    return new DatabaseThread(await DatabaseThread.#startThread(workerData), clock, onAnnounced, workerData);
  }

  /** Finishes the operations already issued, closes the database and ends the thread. */
  close(): Promise<void> {
    const thread = this.#thread;
    if (!(thread instanceof Worker)) {
      // Operations issued before still get their answers.
      this.#closing ??= this.#drained().then(() => thread.close());
      return this.#closing;
    }
    if (this.#closing === undefined) {
      const closed = this.#submit('close', undefined, undefined);
      this.#closeQueued = true;
      // After a crash there is nothing left to close: every pending operation has already failed.
      this.#closing = closed
        .catch(() => {})
        .then(async () => {
          await thread.terminate();
        });
    }
    return this.#closing;
  }

  /** Test hook: stops the thread the way a crash would. */
  terminateForTesting(): Promise<number> {
    return (this.#thread as Worker).terminate();
  }

  /**
   * #submit for an operation whose result may be large (`bytes` at most): it joins the next batch
   * of requests while that batch asks for at most BATCH_RESULT_BYTES, else waits for a later one.
   * A batch always takes the first such operation, whatever its bytes.
   */
  #submitLarge<K extends OpName>(
    bytes: number,
    op: K,
    span: StoreSpan | undefined,
    input: OpInput<K>,
    ...args: OpArgs<K>
  ): Promise<OpAnswer<K>> {
    // Refused at once (closed, or down) counts nothing: #queuedBytes is what #queued holds.
    if (this.#closing !== undefined || this.#failure !== undefined) return this.#submit(op, span, input, ...args);
    if (this.#large.length === 0 && (this.#queuedBytes === 0 || this.#queuedBytes + bytes <= BATCH_RESULT_BYTES)) {
      this.#queuedBytes += bytes;
      return this.#submit(op, span, input, ...args);
    }
    const { promise, resolve } = Promise.withResolvers<OpAnswer<K>>();
    this.#large.push({ bytes, submit: () => resolve(this.#submit(op, span, input, ...args)) });
    return promise;
  }

  /** Moves the large operations that waited into the next batch, as many as BATCH_RESULT_BYTES allows. */
  #admitLarge(): void {
    this.#queuedBytes = 0;
    // After every batch of requests, a create's among them: nothing more unless lists wait.
    if (this.#large.length === 0) return;
    let taken = 0;
    for (const { bytes } of this.#large) {
      if (taken > 0 && this.#queuedBytes + bytes > BATCH_RESULT_BYTES) break;
      this.#queuedBytes += bytes;
      taken += 1;
    }
    for (const { submit } of this.#large.splice(0, taken)) submit();
  }

  /** Resolves once no operation is queued or running. */
  #drained(): Promise<void> {
    if (this.#idle()) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#onIdle = resolve;
    return promise;
  }

  /**
   * Queues an operation in its lane's next batch; its decode turns the thread's result (with
   * `input`, which saves a closure per call) into the answer. The operation's span, if traced, ends
   * when its batch answers.
   */
  #submit<K extends OpName>(
    op: K,
    span: StoreSpan | undefined,
    input: OpInput<K>,
    ...args: OpArgs<K>
  ): Promise<OpAnswer<K>> {
    if (this.#closing !== undefined || this.#failure !== undefined) {
      const error = this.#closing === undefined ? this.#failure : new StoreUnavailableError('The store is closed.');
      span?.end(0, error);
      return Promise.reject(error);
    }
    const { promise, resolve, reject } = Promise.withResolvers<OpAnswer<K>>();
    if (this.#idle()) this.#thread.ref();
    const { code, outbox, announces, decode } = OPERATIONS[op];
    (outbox ? this.#background : this.#queued).push({
      decode: decode as Pending['decode'],
      announces,
      input,
      resolve: resolve as (value: unknown) => void,
      reject,
      span,
    });
    (outbox ? this.#backgroundMessage : this.#message).push(code, ...args);
    this.#schedule();
    return promise;
  }

  #idle(): boolean {
    // Operations wait in #large only behind one in #queued.
    return this.#queued.length === 0 && this.#background.length === 0 && this.#sent === undefined;
  }

  #schedule(): void {
    if (this.#flushScheduled || this.#sent !== undefined) return;
    this.#flushScheduled = true;
    // setImmediate lets every request already read in this turn of the event loop join the batch.
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#sent !== undefined) return;
    const requestsWait = this.#queued.length > 0;
    const background = this.#background.length > 0 && !(requestsWait && (this.#sentBackground || this.#closeQueued));
    if (!background && !requestsWait) return;
    this.#sentBackground = background;
    let message: unknown[];
    if (background) {
      this.#sent = this.#background;
      this.#background = [];
      message = this.#backgroundMessage;
      this.#backgroundMessage = [];
    } else {
      this.#sent = this.#queued;
      this.#queued = [];
      message = this.#message;
      this.#message = [];
    }
    this.#thread.postMessage(message);
    if (!background) this.#admitLarge();
  }

  #settle(reply: BatchReply): void {
    const batch = this.#sent ?? [];
    this.#sent = undefined;
    const failure =
      reply[0] === null
        ? undefined
        : new StoreUnavailableError('The embedded database could not commit the write.', {
            cause: reviveError(reply[0]),
          });
    // Listeners hear of creates and deletes that announced a plant: with no endpoint enabled there is nothing to deliver.
    let announced = false;
    for (const [index, pending] of batch.entries()) {
      const result = reply[index + 1];
      pending.span?.end(batch.length, result === undefined ? failure : undefined);
      if (result === undefined) pending.reject(failure);
      else {
        if (result === 'announced' && pending.announces) announced = true;
        pending.resolve(pending.decode(pending.input as never, result));
      }
    }
    if (announced) this.#onAnnounced();
    if (this.#queued.length > 0 || this.#background.length > 0) this.#schedule();
    else {
      this.#thread.unref();
      this.#onIdle?.();
      this.#onIdle = undefined;
    }
  }

  #stopped(thread: Worker | MessagePort, code: number): void {
    // A thread replaced already: what it held failed then.
    if (thread !== this.#thread) return;
    const cause = this.#crash ?? new Error(`The database thread exited with code ${code}.`);
    this.#crash = undefined;
    this.#failure =
      this.#closing === undefined
        ? new StoreUnavailableError(RESTARTING, { cause })
        : new StoreUnavailableError('The store is closed.', { cause });
    this.#failPending();
    // Closed, there is nothing to restart; an attached store waits for the store that opened the
    // database to reattach it.
    if (this.#closing !== undefined || !(thread instanceof Worker)) return;
    for (const listener of this.#events) listener({ kind: 'stopped', error: cause });
    this.#restart();
  }

  /** Fails every operation issued and not answered: none of their writes is acknowledged. */
  #failPending(): void {
    const pending = [...(this.#sent ?? []), ...this.#queued, ...this.#background];
    const large = this.#large;
    this.#sent = undefined;
    this.#queued = [];
    this.#message = [];
    this.#background = [];
    this.#backgroundMessage = [];
    this.#large = [];
    this.#queuedBytes = 0;
    for (const { reject, span } of pending) {
      span?.end(0, this.#failure);
      reject(this.#failure);
    }
    // #submit fails them with #failure.
    for (const { submit } of large) submit();
    this.#onIdle?.();
    this.#onIdle = undefined;
  }

  /**
   * Starts the thread again on the same database after a delay that doubles with each recent stop;
   * what was committed is there, and a lease the old thread held is due again (openDatabase). Past
   * MAX_RESTARTS stops in RESTART_WINDOW_MS, or if it cannot start, the store gives up.
   */
  #restart(): void {
    const now = this.#clock.now();
    this.#stops = [...this.#stops.filter((at) => now - at < RESTART_WINDOW_MS), now];
    if (this.#stops.length > MAX_RESTARTS) {
      this.#giveUp(this.#failure?.cause);
      return;
    }
    this.#clock.setTimeout(
      () => {
        if (this.#closing !== undefined) return;
        DatabaseThread.#startThread(this.#threadData as ThreadData).then(
          async (thread) => {
            if (this.#closing !== undefined) return void (await thread.terminate());
            this.#thread = thread;
            this.#listen(thread);
            this.#failure = undefined;
            for (const listener of this.#events) listener({ kind: 'restarted' });
          },
          (error: unknown) => {
            if (this.#closing !== undefined) return;
            this.#failure = new StoreUnavailableError(RESTARTING, { cause: error });
            this.#restart();
          },
        );
      },
      RESTART_DELAY_MS * 2 ** (this.#stops.length - 1),
    );
  }

  #giveUp(error: unknown): void {
    this.#failure = new StoreUnavailableError('The embedded database stopped and could not be restarted.', {
      cause: error,
    });
    for (const listener of this.#events) listener({ kind: 'gave-up', error });
  }
}
