import type { Logger } from 'pino';
import { type Clock, systemClock } from '../clock.ts';
import type { WebhookStore } from '../store/webhook-store.ts';

/** Deliveries deleted per store operation: a few milliseconds of the database, never a stall. */
export const PRUNE_BATCH = 1_000;
/** The longest wait between two checks, however long the retention. */
const MOST_INTERVAL_MS = 3_600_000;

export type WebhookRetention = { stop(): Promise<void> };

/**
 * Deletes deliveries finished (delivered or failed) longer ago than `retentionMs`, at start and then
 * every min(retention, 1 h), in batches of PRUNE_BATCH, so that the outbox stays bounded under
 * steady load. Replicas on one PostgreSQL database may all run it: their batches skip each other's.
 */
export const startWebhookRetention = ({
  store,
  retentionMs,
  logger,
  clock = systemClock,
}: {
  store: WebhookStore;
  retentionMs: number;
  logger: Logger;
  /** Default: the system's. */
  clock?: Clock;
}): WebhookRetention => {
  let stopped = false;
  let cancel = () => {};
  let running: Promise<void> = Promise.resolve();

  const prune = async () => {
    const before = new Date(clock.now() - retentionMs);
    let deleted = 0;
    try {
      for (;;) {
        const batch = await store.pruneFinished(before, PRUNE_BATCH);
        deleted += batch;
        if (batch < PRUNE_BATCH || stopped) break;
      }
    } catch (error) {
      // The next check tries again; nothing is lost by waiting.
      if (!stopped) logger.warn({ err: error }, 'could not delete webhook deliveries past their retention');
    }
    if (deleted > 0) logger.info({ deleted, retentionMs }, 'deleted webhook deliveries past their retention');
  };

  const schedule = (delayMs: number) => {
    // The check never keeps the process alive; the server does.
    cancel = clock.setTimeout(
      () => {
        running = prune().then(() => {
          if (!stopped) schedule(Math.min(retentionMs, MOST_INTERVAL_MS));
        });
      },
      delayMs,
      { keepAlive: false },
    );
  };
  schedule(0);

  return {
    async stop() {
      stopped = true;
      cancel();
      await running;
    },
  };
};
