import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { type Clock, systemClock } from '../../clock.ts';
import type { StoreSpan, Tracing } from '../../ops/tracing-hooks.ts';
import {
  type CreateOutcome,
  type ListOptions,
  type PlantStore,
  type StoredPlant,
  StoreUnavailableError,
  samePlant,
} from '../plant-store.ts';
import { DELIVERY_ROW_BYTES, ENDPOINTS_BYTES, listBytes } from '../row-bytes.ts';
import {
  AnnounceListeners,
  type ClaimedDelivery,
  type CreateEndpointOutcome,
  type DeliveryStatus,
  type EndpointBacklog,
  type EndpointSecrets,
  type StoredDelivery,
  type StoredEndpoint,
  type UpdateEndpointOutcome,
  type WebhookBacklog,
  type WebhookStore,
} from '../webhook-store.ts';
import {
  type AttachMessage,
  type BatchReply,
  type ClaimedRow,
  type DeliveryRow,
  type EndpointRow,
  type ErrorDescription,
  OPERATIONS,
  type OpArgs,
  type OpName,
  type OpResult,
  type StartupMessage,
  type WorkerData,
} from './protocol.ts';

export const SQLITE_FILE_NAME = 'plants.sqlite';

// From source the thread's module is TypeScript beside this file; the build emits it as
// dist/sqlite-thread.js beside the bundle that holds this code.
const THREAD_URL = new URL(import.meta.url.endsWith('.ts') ? './thread.ts' : './sqlite-thread.js', import.meta.url);

/** Another process holds the data directory; sharing it would not be safe. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

/** An operation sent (or about to be sent) to the worker; `decode` turns its result into the answer. */
type Pending = {
  decode: (input: never, result: unknown) => unknown;
  input: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** The operation's span, when traced: it ends with its batch. */
  span: StoreSpan | undefined;
};

const toPlant = (id: bigint, name: string, tag: string | null): StoredPlant =>
  tag === null ? { id, name } : { id, name, tag };

const decodeCreate = (plant: StoredPlant, result: OpResult<'create'>): CreateOutcome => {
  if (result === true || result === 'announced') return { outcome: 'created', plant };
  const [name, tag] = result;
  const existing = toPlant(plant.id, name, tag);
  return samePlant(existing, plant) ? { outcome: 'replayed', plant: existing } : { outcome: 'conflict', existing };
};

const decodeGet = (id: bigint, result: OpResult<'get'>): StoredPlant | undefined =>
  result === null ? undefined : toPlant(id, ...result);

const decodeList = (_: undefined, result: OpResult<'list'>): StoredPlant[] => {
  const flat = result as unknown[];
  const plants: StoredPlant[] = [];
  for (let at = 0; at < flat.length; at += 3) {
    plants.push(toPlant(flat[at] as bigint, flat[at + 1] as string, flat[at + 2] as string | null));
  }
  return plants;
};

const decodeBoolean = (_: undefined, result: boolean): boolean => result;

/** The result as it came: for operations the store loops on. */
const asIs = <R>(_: undefined, result: R): R => result;

/**
 * The most bytes of results one batch of requests asks the database worker for, as the operations
 * that answer many rows (listing plants or deliveries) count them: more such operations wait for
 * the next batch, so the worker's heap (`WORKER_HEAP_MB`) holds a bounded batch whatever the load.
 */
export const BATCH_RESULT_BYTES = 2 * 1024 * 1024;

/**
 * The database worker's old generation, in MiB. A batch asks for at most BATCH_RESULT_BYTES of
 * results: its worst case (seven of the largest pages, of the longest plants in four-byte
 * characters, beside 1,024 such creates) ran in a 12 MiB old generation and not in 8 MiB
 * (scripts/answer-heap.ts); 32 MiB leaves V8's collector room beyond that.
 */
const WORKER_HEAP_MB = 32;

/**
 * After the worker stopped unexpectedly, it is started again after this delay, doubled with every
 * stop in the last RESTART_WINDOW_MS; past MAX_RESTARTS of them the store gives up (see `onEvent`).
 */
export const RESTART_DELAY_MS = 100;
const RESTART_WINDOW_MS = 60_000;
export const MAX_RESTARTS = 5;

const RESTARTING = 'The embedded database stopped unexpectedly and is restarting; retry later.';

/** What happens to the database worker, for the service to log, and to exit on `gave-up`. */
export type StoreEvent =
  | { kind: 'stopped'; error: unknown }
  | { kind: 'restarted' }
  | { kind: 'gave-up'; error: unknown };

/** Deliveries deleted per operation when an endpoint is deleted. */
const DELETE_BATCH = 250;

const decodeNothing = (): void => {};

const toEndpoint = (row: EndpointRow): StoredEndpoint => ({
  id: row.id,
  url: row.url,
  ...(row.description !== null && { description: row.description }),
  enabled: Number(row.enabled) === 1,
  ...(row.disabled_reason !== null && { disabledReason: row.disabled_reason }),
  createdAt: new Date(Number(row.created_at)),
});

const toDelivery = (row: DeliveryRow): StoredDelivery => ({
  id: row.id,
  endpointId: row.endpoint_id,
  plantId: row.plant_id,
  status: row.status as DeliveryStatus,
  attempts: Number(row.attempts),
  ...(row.last_status !== null && { lastStatus: Number(row.last_status) }),
  ...(row.last_error !== null && { lastError: row.last_error }),
  ...(row.next_attempt_at !== null && { nextAttemptAt: new Date(Number(row.next_attempt_at)) }),
  ...(row.delivered_at !== null && { deliveredAt: new Date(Number(row.delivered_at)) }),
  createdAt: new Date(Number(row.created_at)),
});

const toClaimed = (
  [id, seq, endpointId, url, secret, previousSecret, plantId, name, tag, attempts, createdAt, traceparent]: ClaimedRow,
  leaseToken: string,
): ClaimedDelivery => {
  // The optional fields are set last, not spread into the literal: every property after a spread
  // is defined through a slow runtime call, once per delivery.
  const claimed: ClaimedDelivery = {
    id,
    seq,
    endpointId,
    url,
    secret,
    plant: toPlant(plantId, name, tag),
    attempts: Number(attempts),
    leaseToken,
    createdAt: new Date(Number(createdAt)),
  };
  if (previousSecret !== null) claimed.previousSecret = previousSecret;
  if (traceparent !== null) claimed.traceparent = traceparent;
  return claimed;
};

const reviveError = ({ message, stack, ...details }: ErrorDescription): Error => {
  const error = Object.assign(new Error(message), details);
  if (stack !== undefined) error.stack = stack;
  return error;
};

/**
 * The embedded store: one SQLite database under the data directory, owned by a worker thread so
 * that queries and commit fsyncs run beside the HTTP thread instead of blocking it. Operations of
 * one event-loop turn travel as one message; the worker runs their writes in one transaction (group
 * commit: one fsync acknowledges them all). While it commits, new operations wait here and form the
 * next batch, so batches grow with load. Reads share the queue, so a read sees every write
 * acknowledged before it was issued.
 *
 * The webhook outbox's own work (fan-out, claims, attempts recorded, deletions and pruning in
 * batches) travels in a lane of its own: its batches alternate with those of requests, so that a
 * plant operation waits behind at most one batch of that work, never behind a queue of it.
 */
export class SqlitePlantStore implements PlantStore {
  /** The database worker, or a port attached to it (see `attach`); replaced when it restarts. */
  #worker: Worker | MessagePort;
  /** Where the database is, for the store that opened it: its worker is restarted there. */
  readonly #workerData: WorkerData | undefined;
  /** When deliveries are due, leased and retried; plants and announcements keep the database worker's time. */
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
  /** The batch the worker is running; at most one at a time. */
  #sent: Pending[] | undefined;
  /** The result bytes that the next batch of requests asks for (see BATCH_RESULT_BYTES). */
  #queuedBytes = 0;
  /** Operations of many rows that did not fit in the next batch, oldest first, each with its bytes. */
  #large: { bytes: number; submit: () => void }[] = [];
  /** When the worker stopped unexpectedly, in the last RESTART_WINDOW_MS. */
  #stops: number[] = [];
  readonly #events = new Set<(event: StoreEvent) => void>();
  #flushScheduled = false;
  /** Set while the worker is down (restarting, or given up); every operation fails with it meanwhile. */
  #failure: StoreUnavailableError | undefined;
  #crash: unknown;
  #closing: Promise<void> | undefined;
  /** Called once no operation is queued or running (see #drained). */
  #onIdle: (() => void) | undefined;
  /** Set when tracing is on: plant operations get spans (no instrumentation sees this thread's messages). */
  readonly #tracing: Tracing | undefined;

  /** Endpoints and the outbox, in the same database and batches as the plants. */
  readonly webhooks: WebhookStore = {
    createEndpoint: (endpoint, max) => {
      const { id, url, description, secret } = endpoint;
      return this.#submit(
        undefined,
        (_: undefined, result): CreateEndpointOutcome => {
          if (typeof result === 'number') {
            const createdAt = new Date(result);
            const created = { id, url, ...(description !== undefined && { description }), enabled: true, createdAt };
            return { outcome: 'created', endpoint: created };
          }
          return result === false ? { outcome: 'too-many' } : { outcome: 'url-taken', holder: result };
        },
        undefined,
        'createEndpoint',
        id,
        url,
        description ?? null,
        secret,
        max,
      );
    },
    updateEndpoint: (id, { url, description, enabled }) =>
      this.#submit(
        undefined,
        (_: undefined, result): UpdateEndpointOutcome => {
          if (result === null) return { outcome: 'not-found' };
          if (typeof result === 'string') return { outcome: 'url-taken', holder: result };
          return { outcome: 'updated', endpoint: toEndpoint(result) };
        },
        undefined,
        'updateEndpoint',
        id,
        url ?? null,
        description === undefined ? 0 : 1,
        description ?? null,
        enabled === undefined ? null : Number(enabled),
      ),
    rotateSecret: (id, secret, previousUntil) =>
      this.#submit(undefined, asIs, undefined, 'rotateSecret', id, secret, previousUntil.getTime()),
    requeueFailed: (endpointId, since, limit) =>
      this.#submit(undefined, asIs, undefined, 'requeueFailed', endpointId, since.getTime(), limit, this.#clock.now()),
    retryDelivery: (endpointId, deliveryId) =>
      this.#submit(undefined, asIs, undefined, 'retryDelivery', endpointId, deliveryId, this.#clock.now()),
    endpointSecrets: () =>
      this.#submit(
        undefined,
        (_: undefined, rows) =>
          rows.map(
            ({ id, secret, previous_secret }): EndpointSecrets =>
              previous_secret === null ? { id, secret } : { id, secret, previousSecret: previous_secret },
          ),
        undefined,
        'endpointSecrets',
      ),
    replaceSecret: (id, which, from, to) =>
      this.#submit(undefined, asIs, undefined, 'replaceSecret', id, which, from, to),
    listEndpoints: () =>
      this.#submitLarge(
        ENDPOINTS_BYTES,
        undefined,
        (_: undefined, rows) => rows.map(toEndpoint),
        undefined,
        'listEndpoints',
      ),
    getEndpoint: (id) =>
      this.#submit(
        undefined,
        (_: undefined, row) => (row === null ? undefined : toEndpoint(row)),
        undefined,
        'getEndpoint',
        id,
      ),
    deleteEndpoint: async (id) => {
      // In batches, each its own transaction: plant operations take turns with a large deletion.
      for (;;) {
        const deleted = await this.#submit(undefined, asIs, undefined, 'deleteEndpoint', id, DELETE_BATCH);
        if (deleted !== false) return deleted === true;
      }
    },
    listDeliveries: async (endpointId, limit) => {
      // Listing answers every announcement made before it, fanned out in bounded batches, each its
      // own transaction: plant operations take turns with a large fan-out.
      let last: bigint | null = null;
      do last = await this.#submit(undefined, asIs, undefined, 'fanOut', last);
      while (last !== null);
      return this.#submitLarge(
        limit * DELIVERY_ROW_BYTES,
        undefined,
        (_: undefined, rows) => (rows === null ? undefined : rows.map(toDelivery)),
        undefined,
        'listDeliveries',
        endpointId,
        limit,
      );
    },
    claimDue: ({ limit, leaseMs, perEndpoint, room }) => {
      const token = randomUUID();
      const now = this.#clock.now();
      return this.#submit(
        undefined,
        (_: undefined, rows) => rows.map((row) => toClaimed(row, token)),
        undefined,
        'claimDue',
        now,
        limit,
        now + leaseMs,
        token,
        perEndpoint,
        [...room].flat(),
      );
    },
    recordAttempt: async (claim, result) => (await this.webhooks.recordAttempts([{ claim, result }]))[0] === true,
    recordAttempts: (attempts) => {
      const now = this.#clock.now();
      const flat: unknown[] = [];
      for (const { claim, result } of attempts) {
        flat.push(
          claim.seq,
          claim.leaseToken,
          result.outcome,
          'status' in result && result.status !== undefined ? result.status : null,
          'error' in result ? result.error : null,
          result.outcome === 'retry' ? now + result.retryInMs : null,
          claim.endpointId,
        );
      }
      return this.#submit(undefined, asIs, undefined, 'recordAttempts', now, flat);
    },
    backlog: () =>
      this.#submit(
        undefined,
        (_: undefined, [pending, oldest]): WebhookBacklog => {
          return { pending, oldestPendingAt: oldest === null ? undefined : new Date(oldest) };
        },
        undefined,
        'backlog',
      ),
    backlogByEndpoint: (limit) =>
      this.#submit(
        undefined,
        (_: undefined, flat): EndpointBacklog[] => {
          const lag: EndpointBacklog[] = [];
          for (let index = 0; index < flat.length; index += 2)
            lag.push({ endpointId: flat[index] as string, oldestPendingAt: new Date(flat[index + 1] as number) });
          return lag;
        },
        undefined,
        'backlogByEndpoint',
        limit,
      ),
    disableEndpoint: (id, reason, failingSince) =>
      this.#submit(
        undefined,
        decodeBoolean,
        undefined,
        'disableEndpoint',
        id,
        reason,
        failingSince === undefined ? null : failingSince.getTime(),
      ),
    pruneFinished: (before, limit) =>
      this.#submit(undefined, asIs, undefined, 'pruneFinished', before.getTime(), limit),
    onAnnounce: (listener) => this.#announced.add(listener),
  };

  readonly #announced = new AnnounceListeners();

  private constructor(worker: Worker | MessagePort, clock: Clock, tracing?: Tracing, workerData?: WorkerData) {
    this.#worker = worker;
    this.#workerData = workerData;
    this.#clock = clock;
    this.#tracing = tracing;
    this.#listen(worker);
  }

  #listen(worker: Worker | MessagePort): void {
    worker.on('message', (reply: unknown) => {
      // Under `node --watch`, Node also reports the worker's imports on this port, as objects.
      if (Array.isArray(reply)) this.#settle(reply as BatchReply);
    });
    if (worker instanceof Worker) {
      worker.on('error', (error) => {
        this.#crash = error;
      });
      worker.on('exit', (code) => this.#stopped(worker, code));
    } else worker.on('close', () => this.#stopped(worker, 0));
    // An idle store must not keep the process alive; pending operations hold it (see #submit).
    worker.unref();
  }

  /**
   * Tells `listener` when the database worker stops unexpectedly, when it runs again, and when the
   * store gave up restarting it (the service then exits, for its supervisor to start it afresh).
   * Returns the unsubscribe.
   */
  onEvent(listener: (event: StoreEvent) => void): () => void {
    this.#events.add(listener);
    return () => this.#events.delete(listener);
  }

  /** False while the database worker is down: restarting, or given up. */
  alive(): boolean {
    return this.#failure === undefined || this.#closing !== undefined;
  }

  /**
   * A store attached over a channel whose worker stopped is down until the store that opened the
   * database gives it a channel to the new worker (see `channel`).
   */
  reattach(port: MessagePort): void {
    if (this.#worker instanceof Worker) throw new Error('Only a store made by `attach` is reattached.');
    if (this.#closing !== undefined) {
      port.close();
      return;
    }
    // The new channel may come before the old one is seen closed: what the old one held fails.
    if (this.#failure === undefined) {
      this.#failure = new StoreUnavailableError(RESTARTING);
      this.#failPending();
    }
    this.#worker = port;
    this.#listen(port);
    this.#failure = undefined;
  }

  /**
   * A port to this store's database, for another thread to pass to `attach`: its batches go
   * straight to the database worker and take turns there with this store's.
   */
  channel(): MessagePort {
    if (!(this.#worker instanceof Worker)) throw new Error('Only the store that opened the database makes channels.');
    const { port1, port2 } = new MessageChannel();
    this.#worker.postMessage({ attach: port2 } satisfies AttachMessage, [port2]);
    return port1;
  }

  /**
   * The store over a `channel()` of another thread's store: the same database, without its
   * ownership. `close` ends the channel and leaves the database open to the store that opened it.
   */
  static attach(port: MessagePort): SqlitePlantStore {
    return new SqlitePlantStore(port, systemClock);
  }

  /** Starts a database worker on `workerData`; resolves once it opened the database. */
  static async #startWorker(workerData: WorkerData): Promise<Worker> {
    const worker = new Worker(THREAD_URL, {
      name: 'plant-sqlite',
      // The worker runs one known module: inherited flags such as --input-type (from `node --eval`)
      // would break its start, and --import preloads would only slow it.
      execArgv: [],
      // The worker holds a batch at a time (see WORKER_HEAP_MB); V8's default heap would grow to
      // tens of MiB under load.
      resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: WORKER_HEAP_MB },
      workerData,
    });
    const started = await new Promise<StartupMessage>((resolve, reject) => {
      const onMessage = (message: unknown) => {
        // Skips what `node --watch` reports on the same port.
        if ((message as Partial<StartupMessage> | null)?.startup === undefined) return;
        worker.off('message', onMessage);
        resolve(message as StartupMessage);
      };
      // The 'error' and 'exit' listeners left behind once started do nothing: the promise is settled.
      worker
        .on('message', onMessage)
        .once('error', reject)
        .once('exit', (code) => reject(new Error(`The database worker exited (code ${code}) while opening.`)));
    });
    if (started.startup === 'ready') return worker;
    await worker.terminate();
    if (started.startup === 'in-use') {
      throw new DataDirInUseError(
        `The data directory ${workerData.dataDir} is in use by another Plant Store process; stop it or set PLANT_DATA_DIR to another directory.`,
      );
    }
    throw reviveError(started.failure);
  }

  /**
   * Opens (creating if needed) the store under `dataDir`; rejects with DataDirInUseError if another
   * process has it. `clock` (default the system's) says when deliveries are due: a test moves it.
   * With `tracing`, its plant operations are traced.
   */
  static async open(
    dataDir: string,
    { clock = systemClock, tracing }: { clock?: Clock | undefined; tracing?: Tracing | undefined } = {},
  ): Promise<SqlitePlantStore> {
    const workerData: WorkerData = { dataDir, path: join(dataDir, SQLITE_FILE_NAME) };
    return new SqlitePlantStore(await SqlitePlantStore.#startWorker(workerData), clock, tracing, workerData);
  }

  create(plant: StoredPlant): Promise<CreateOutcome> {
    const span = this.#tracing?.storeOperation('create');
    const { id, name, tag } = plant;
    return this.#submit(span, decodeCreate, plant, 'create', id, name, tag ?? null, span?.traceparent ?? null);
  }

  delete(id: bigint): Promise<boolean> {
    return this.#submit(this.#tracing?.storeOperation('delete'), decodeBoolean, undefined, 'delete', id);
  }

  get(id: bigint): Promise<StoredPlant | undefined> {
    return this.#submit(this.#tracing?.storeOperation('get'), decodeGet, id, 'get', id);
  }

  list(options: ListOptions): Promise<StoredPlant[]> {
    const { after, limit, tag, maxBytes } = options;
    const span = this.#tracing?.storeOperation('list');
    // Unbounded, a list is bounded by `limit` alone: the same statement, with a sum it never reaches.
    const bound = maxBytes ?? Number.MAX_SAFE_INTEGER;
    return this.#submitLarge(
      listBytes(options),
      span,
      decodeList,
      undefined,
      'list',
      after ?? null,
      limit,
      tag ?? null,
      bound,
    );
  }

  health(): Promise<void> {
    return this.#submit(undefined, decodeNothing, undefined, 'health');
  }

  /** Finishes the operations already issued, closes the database and ends the worker. */
  close(): Promise<void> {
    const worker = this.#worker;
    if (!(worker instanceof Worker)) {
      // Operations issued before still get their answers.
      this.#closing ??= this.#drained().then(() => worker.close());
      return this.#closing;
    }
    if (this.#closing === undefined) {
      const closed = this.#submit(undefined, decodeNothing, undefined, 'close');
      this.#closeQueued = true;
      // After a crash there is nothing left to close: every pending operation has already failed.
      this.#closing = closed
        .catch(() => {})
        .then(async () => {
          await worker.terminate();
        });
    }
    return this.#closing;
  }

  /** Test hook: stops the worker the way a crash would. */
  terminateWorkerForTesting(): Promise<number> {
    return (this.#worker as Worker).terminate();
  }

  /**
   * #submit for an operation whose result may be large (`bytes` at most): it joins the next batch
   * of requests while that batch asks for at most BATCH_RESULT_BYTES, else waits for a later one.
   * A batch always takes the first such operation, whatever its bytes.
   */
  #submitLarge<K extends OpName, I, T>(
    bytes: number,
    span: StoreSpan | undefined,
    decode: (input: I, result: OpResult<K>) => T,
    input: I,
    op: K,
    ...args: OpArgs<K>
  ): Promise<T> {
    // Refused at once (closed, or down) counts nothing: #queuedBytes is what #queued holds.
    if (this.#closing !== undefined || this.#failure !== undefined)
      return this.#submit(span, decode, input, op, ...args);
    if (this.#large.length === 0 && (this.#queuedBytes === 0 || this.#queuedBytes + bytes <= BATCH_RESULT_BYTES)) {
      this.#queuedBytes += bytes;
      return this.#submit(span, decode, input, op, ...args);
    }
    const { promise, resolve } = Promise.withResolvers<T>();
    this.#large.push({ bytes, submit: () => resolve(this.#submit(span, decode, input, op, ...args)) });
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
   * Queues an operation in its lane's next batch; `decode` turns the worker's result (with `input`,
   * which saves a closure per call) into the answer. The operation's span, if traced, ends when its
   * batch answers.
   */
  #submit<K extends OpName, I, T>(
    span: StoreSpan | undefined,
    decode: (input: I, result: OpResult<K>) => T,
    input: I,
    op: K,
    ...args: OpArgs<K>
  ): Promise<T> {
    if (this.#closing !== undefined || this.#failure !== undefined) {
      const error = this.#closing === undefined ? this.#failure : new StoreUnavailableError('The store is closed.');
      span?.end(0, error);
      return Promise.reject(error);
    }
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    if (this.#idle()) this.#worker.ref();
    const { code, outbox } = OPERATIONS[op];
    (outbox ? this.#background : this.#queued).push({
      decode: decode as Pending['decode'],
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
    this.#worker.postMessage(message);
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
    // Listeners hear of creates that announced a plant: with no endpoint enabled there is nothing to deliver.
    let announced = false;
    for (const [index, pending] of batch.entries()) {
      const result = reply[index + 1];
      pending.span?.end(batch.length, result === undefined ? failure : undefined);
      if (result === undefined) pending.reject(failure);
      else {
        if (result === 'announced' && pending.decode === decodeCreate) announced = true;
        pending.resolve(pending.decode(pending.input as never, result));
      }
    }
    if (announced) this.#announced.notify();
    if (this.#queued.length > 0 || this.#background.length > 0) this.#schedule();
    else {
      this.#worker.unref();
      this.#onIdle?.();
      this.#onIdle = undefined;
    }
  }

  #stopped(worker: Worker | MessagePort, code: number): void {
    // A worker replaced already: what it held failed then.
    if (worker !== this.#worker) return;
    const cause = this.#crash ?? new Error(`The database worker exited with code ${code}.`);
    this.#crash = undefined;
    this.#failure =
      this.#closing === undefined
        ? new StoreUnavailableError(RESTARTING, { cause })
        : new StoreUnavailableError('The store is closed.', { cause });
    this.#failPending();
    // Closed, there is nothing to restart; an attached store waits for the store that opened the
    // database to reattach it.
    if (this.#closing !== undefined || !(worker instanceof Worker)) return;
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
   * Starts the worker again on the same database after a delay that doubles with each recent stop;
   * what was committed is there, and a lease the old worker held is due again (openDatabase). Past
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
        SqlitePlantStore.#startWorker(this.#workerData as WorkerData).then(
          async (worker) => {
            if (this.#closing !== undefined) return void (await worker.terminate());
            this.#worker = worker;
            this.#listen(worker);
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
