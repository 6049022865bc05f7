/**
 * The parent (HTTP) thread's side of the webhook delivery thread: starts delivery-thread.ts, relays
 * announcements, log lines and metrics, and stops it. The thread's own side is delivery-thread.ts.
 */
import { type MessagePort, Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Metrics } from '../../ops/metrics.ts';
import { threadFlags } from '../../ops/thread-flags.ts';
import type { PlantStore } from '../../store/plant-store.ts';
import { SqlitePlantStore } from '../../store/sqlite/sqlite-store.ts';
import type { WebhookDelivery } from './delivery-loop.ts';
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from './delivery-thread-protocol.ts';

// From source the thread is TypeScript beside this file; the build emits it as
// dist/delivery-thread.js beside the bundle that holds this code.
const THREAD_URL = new URL(
  import.meta.url.endsWith('.ts') ? './delivery-thread.ts' : './delivery-thread.js',
  import.meta.url,
);

/**
 * PostgreSQL connections of the delivery thread at most: it holds one claim and one batch of
 * recorded attempts at a time, and now and then a disable check, a backlog read or a prune.
 */
const DELIVERY_POOL_SIZE = 4;
/** A scrape waits this long for the thread's metrics, then answers without them. */
const METRICS_TIMEOUT_MS = 2_000;
/** Beyond the delivery loop's own stop grace (5 s): time to record, close the pool and end. */
const STOP_TIMEOUT_MS = 10_000;

export type DeliveryThreadOptions = {
  store: PlantStore;
  config: Pick<Config, 'webhooks' | 'logLevel' | 'database' | 'tracing'>;
  logger: Logger;
  /** Writes a log line of the thread's with the process's own log writer. */
  writeLog(line: string): void;
  /** The delivery metrics join these in every scrape. */
  metrics?: Metrics;
  /** The thread stopped unexpectedly: deliveries would stop with it. */
  onCrash(error: Error): void;
};

/**
 * Runs the delivery loop in a thread of its own (delivery-thread.ts), so that the HTTP thread
 * neither claims, signs, sends nor records deliveries: it only tells the thread when plants were
 * announced (once per batch of creates), writes its log lines, and asks it for its metrics at each
 * scrape. Resolves once the thread delivers.
 */
export const startDeliveryThread = async ({
  store,
  config,
  logger,
  writeLog,
  metrics,
  onCrash,
}: DeliveryThreadOptions): Promise<WebhookDelivery> => {
  const data: DeliveryThreadData = { webhooks: config.webhooks, logLevel: config.logLevel, tracing: config.tracing };
  const transfer: MessagePort[] = [];
  if (config.database) {
    data.database = { ...config.database, poolSize: Math.min(config.database.poolSize, DELIVERY_POOL_SIZE) };
  } else if (store instanceof SqlitePlantStore) {
    data.sqlite = store.channel();
    transfer.push(data.sqlite);
  } else throw new Error('The delivery thread needs the PostgreSQL configuration or the embedded store.');

  const thread = new Worker(THREAD_URL, {
    name: 'plant-webhooks',
    execArgv: threadFlags(),
    workerData: data,
    transferList: transfer,
  });
  let stopping = false;
  let delivering = false;
  const scrapes = new Map<number, (text: string) => void>();
  let nextScrape = 0;
  const { promise: ready, resolve: started, reject: failedToStart } = Promise.withResolvers<void>();
  const { promise: stopped, resolve: ended } = Promise.withResolvers<void>();
  thread.on('message', (message: FromDeliveryThread) => {
    if (message === 'ready') {
      delivering = true;
      started();
    } else if (message === 'stopped') ended();
    else if ('log' in message) writeLog(message.log);
    else if ('metrics' in message) {
      scrapes.get(message.metrics)?.(message.text);
      scrapes.delete(message.metrics);
    }
  });
  let crash: Error | undefined;
  thread.on('error', (error) => {
    crash = error;
  });
  thread.on('exit', (code) => {
    ended();
    for (const answer of scrapes.values()) answer('');
    scrapes.clear();
    const error = crash ?? new Error(`The webhook delivery thread exited (code ${code}).`);
    // Before 'ready' the start fails with it; afterwards, unless asked to stop, deliveries stopped.
    failedToStart(error);
    if (delivering && !stopping) onCrash(error);
  });
  await ready;

  const post = (message: ToDeliveryThread) => thread.postMessage(message);
  const stopAnnouncing = store.webhooks.onAnnounce(() => post('announce'));
  // The embedded store's SQLite thread restarted: the thread's channel closed with the old one.
  const stopReattaching =
    store instanceof SqlitePlantStore
      ? store.onEvent(({ kind }) => {
          if (kind !== 'restarted' || stopping) return;
          const port = store.channel();
          thread.postMessage({ attach: port } satisfies ToDeliveryThread, [port]);
        })
      : () => {};
  const stopListening = () => {
    stopAnnouncing();
    stopReattaching();
  };
  metrics?.include(
    () =>
      new Promise<string>((resolve) => {
        const id = nextScrape++;
        const timer = setTimeout(() => {
          scrapes.delete(id);
          logger.warn('the webhook delivery thread did not answer a metrics scrape in time');
          resolve('');
        }, METRICS_TIMEOUT_MS);
        scrapes.set(id, (text) => {
          clearTimeout(timer);
          resolve(text);
        });
        post({ metrics: id });
      }),
  );
  return {
    async stop() {
      if (stopping) return stopped;
      stopping = true;
      stopListening();
      post('stop');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_TIMEOUT_MS);
      });
      await Promise.race([stopped, late]);
      clearTimeout(timer);
      await thread.terminate();
    },
  };
};
