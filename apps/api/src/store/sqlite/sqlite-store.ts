import type { MessagePort } from 'node:worker_threads';
import { plantJson } from '@org/plant-contract';
import { type Clock, systemClock } from '../../clock.ts';
import type { Tracing } from '../../ops/tracing-hooks.ts';
import type { CreateOutcome, ListOptions, PlantStore, StoredPlant } from '../plant-store.ts';
import type { RequestStore } from '../request-store.ts';
import { listBytes } from '../row-bytes.ts';
import { AnnounceListeners, type WebhookStore } from '../webhook-store.ts';
import { DatabaseThread, type StoreEvent } from './database-thread.ts';
import type { Batches } from './protocol.ts';
import { sqliteRequestStore } from './sqlite-request-store.ts';
import { sqliteWebhookStore } from './sqlite-webhook-store.ts';

/**
 * The embedded store: one SQLite database under the data directory, owned by a thread of its own so
 * that queries and commit fsyncs run beside the HTTP thread instead of blocking it (see
 * DatabaseThread, which carries every operation there and back). The plant operations are here, the
 * webhook and request ones in their stores; each is one entry of its feature's table (plants.ts,
 * webhooks.ts, requests.ts).
 */
export class SqlitePlantStore implements PlantStore {
  readonly #thread: DatabaseThread;
  readonly #batches: Batches;
  /** Set when tracing is on: plant operations get spans (no instrumentation sees this thread's messages). */
  readonly #tracing: Tracing | undefined;
  /** Endpoints and the outbox, in the same database and batches as the plants. */
  readonly webhooks: WebhookStore;
  readonly requests: RequestStore;

  private constructor(thread: DatabaseThread, clock: Clock, announced: AnnounceListeners, tracing?: Tracing) {
    this.#thread = thread;
    this.#batches = thread.batches;
    this.#tracing = tracing;
    this.webhooks = sqliteWebhookStore(this.#batches, clock, announced);
    this.requests = sqliteRequestStore(this.#batches);
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
    const announced = new AnnounceListeners();
    const thread = await DatabaseThread.open(dataDir, clock, () => announced.notify());
    return new SqlitePlantStore(thread, clock, announced, tracing);
  }

  /**
   * The store over a `channel()` of another thread's store: the same database, without its
   * ownership. `close` ends the channel and leaves the database open to the store that opened it.
   */
  static attach(port: MessagePort): SqlitePlantStore {
    const announced = new AnnounceListeners();
    return new SqlitePlantStore(
      DatabaseThread.attach(port, systemClock, () => announced.notify()),
      systemClock,
      announced,
    );
  }

  create(plant: StoredPlant): Promise<CreateOutcome> {
    const span = this.#tracing?.storeOperation('create');
    // Serialized here, off the database thread: it keeps and announces the text as it is.
    return this.#batches.submit(
      'create',
      span,
      plant,
      plant.id,
      plant.tag ?? null,
      plantJson(plant),
      span?.traceparent ?? null,
    );
  }

  delete(id: bigint): Promise<boolean> {
    const span = this.#tracing?.storeOperation('delete');
    return this.#batches.submit('delete', span, undefined, id, span?.traceparent ?? null);
  }

  get(id: bigint): Promise<StoredPlant | undefined> {
    return this.#batches.submit('get', this.#tracing?.storeOperation('get'), undefined, id);
  }

  list(options: ListOptions): Promise<StoredPlant[]> {
    const { after, limit, tag, maxBytes } = options;
    const span = this.#tracing?.storeOperation('list');
    // Unbounded, a list is bounded by `limit` alone: the same statement, with a sum it never reaches.
    const bound = maxBytes ?? Number.MAX_SAFE_INTEGER;
    return this.#batches.submitLarge(
      listBytes(options),
      'list',
      span,
      undefined,
      after ?? null,
      limit,
      tag ?? null,
      bound,
    );
  }

  health(): Promise<void> {
    return this.#batches.call('health');
  }

  /** Finishes the operations already issued, closes the database and ends the thread. */
  close(): Promise<void> {
    return this.#thread.close();
  }

  /**
   * Tells `listener` when the database thread stops unexpectedly, when it runs again, and when the
   * store gave up restarting it (the service then exits, for its supervisor to start it afresh).
   * Returns the unsubscribe.
   */
  onEvent(listener: (event: StoreEvent) => void): () => void {
    return this.#thread.onEvent(listener);
  }

  /** False while the database thread is down: restarting, or given up. */
  alive(): boolean {
    return this.#thread.alive();
  }

  /** See DatabaseThread.reattach: a store made by `attach`, given a channel to the restarted thread. */
  reattach(port: MessagePort): void {
    this.#thread.reattach(port);
  }

  /** A port to this store's database, for another thread to pass to `attach` (see DatabaseThread.channel). */
  channel(): MessagePort {
    return this.#thread.channel();
  }

  /** Test hook: stops the thread the way a crash would. */
  terminateWorkerForTesting(): Promise<number> {
    return this.#thread.terminateForTesting();
  }
}
