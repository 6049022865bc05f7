/**
 * The webhook delivery thread of a service process: the delivery loop runs here, with a store
 * connection of its own (a PostgreSQL pool, or a channel straight to the SQLite thread), so that
 * signing, POSTing and recording deliveries happen beside the HTTP thread, not on it (see
 * delivery-thread-parent.ts for the HTTP thread's side).
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { lowerThreadPriority } from '../../ops/thread-priority.ts';
import type { PlantStore } from '../../store/plant-store.ts';
import { SqlitePlantStore } from '../../store/sqlite/sqlite-store.ts';
import { AnnounceListeners } from '../../store/webhook-store.ts';
import { plainSecrets, secretBox } from '../secrets/secret-box.ts';
import { startWebhookDelivery } from './delivery-loop.ts';
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from './delivery-thread-protocol.ts';

const { webhooks, logLevel, database, sqlite, tracing: traced } = workerData as DeliveryThreadData;
const port = parentPort as MessagePort;
// Creates first on saturated cores; the OS still gives this thread its share (decision 0013).
if (webhooks.deliveryNice > 0) lowerThreadPriority(webhooks.deliveryNice);
const send = (message: FromDeliveryThread) => port.postMessage(message);

// Lines go to the HTTP thread's writer: two writers on one stdout could interleave their chunks
// mid-line. Only what is logged travels (failed attempts, warnings), never a delivered attempt at info.
const logger = pino({ level: logLevel }, { write: (line: string) => send({ log: line }) });
let store: PlantStore;
if (database) {
  // pg loads only on PostgreSQL, as in the HTTP thread.
  const { PostgresPlantStore } = await import('../../store/postgres/postgres-store.ts');
  store = await PostgresPlantStore.open({
    ...database,
    // The HTTP thread migrated (or checked) the schema before starting this thread.
    migrate: false,
    onBackgroundError: (error) => logger.warn({ err: error }, 'database connection lost while idle'),
  });
} else store = SqlitePlantStore.attach(sqlite as MessagePort);

// OpenTelemetry loads only when tracing is on, as in the HTTP thread.
const tracing = traced ? await (await import('../../ops/tracing.ts')).startTracing({ instrument: false }) : undefined;

const registry = new Registry();
const announced = new AnnounceListeners();
const delivery = startWebhookDelivery({
  store,
  config: webhooks,
  logger,
  metrics: { registry },
  // Cloning turned the key's Buffer into a plain Uint8Array.
  secrets: webhooks.secretsKey === undefined ? plainSecrets : secretBox(Buffer.from(webhooks.secretsKey)),
  onAnnounce: (listener) => announced.add(listener),
  ...(tracing && { tracing }),
});

port.on('message', (message: ToDeliveryThread) => {
  if (message === 'announce') announced.notify();
  else if (typeof message === 'object' && 'attach' in message) (store as SqlitePlantStore).reattach(message.attach);
  else if (message === 'stop') {
    void delivery
      .stop()
      .then(() => store.close())
      // The spans of the last attempts leave before the thread ends.
      .then(() => tracing?.shutdown())
      .finally(() => {
        send('stopped');
        port.close();
      });
  } else {
    registry.metrics().then(
      (text) => send({ metrics: message.metrics, text }),
      () => send({ metrics: message.metrics, text: '' }),
    );
  }
});
send('ready');
