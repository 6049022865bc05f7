import type { MessagePort } from 'node:worker_threads';
import type { DatabaseConfig, WebhookConfig } from '../../config.ts';

/** What the HTTP thread gives the delivery thread at its start. */
export type DeliveryThreadData = {
  webhooks: WebhookConfig;
  logLevel: string;
  /** PostgreSQL: the thread opens a pool of its own. */
  database?: DatabaseConfig;
  /** The embedded store: a channel to its SQLite thread (SqlitePlantStore.channel). */
  sqlite?: MessagePort;
  /**
   * Tracing is on: the thread starts an SDK of its own (the HTTP thread's is not visible here) for
   * the spans of its attempts.
   */
  tracing: boolean;
};

/**
 * `announce`: plants were created here, deliveries are due; `stop`: drain and end; a metrics scrape;
 * or `attach`: a channel to the embedded store's SQLite thread, restarted.
 */
export type ToDeliveryThread = 'announce' | 'stop' | { metrics: number } | { attach: MessagePort };

/**
 * `ready` once delivering; `stopped` once drained and closed; a scrape's answer in the text format;
 * or a log line, which the HTTP thread writes with its own (see delivery-thread.ts).
 */
export type FromDeliveryThread = 'ready' | 'stopped' | { metrics: number; text: string } | { log: string };
