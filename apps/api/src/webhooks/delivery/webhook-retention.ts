import type { Logger } from 'pino';
import { type Clock, systemClock } from '../../clock.ts';
import type { WebhookStore } from '../../store/webhook-store.ts';

/** Deliveries deleted per store operation: a few milliseconds of the database, never a stall. */
export const PRUNE_BATCH = 1_000;
/** The longest wait between two checks, however long the retention. */
const MOST_INTERVAL_MS = 3_600_000;

export type WebhookRetention = { stop(): Promise<void> };

/** Runs `batch` until it deletes fewer than PRUNE_BATCH rows (or the retention stops); resolves how many. */
const inBatches = async (batch: () => Promise<number>, stopped: () => boolean): Promise<number> => {
  let deleted = 0;
  for (;;) {
    const count = await batch();
    deleted += count;
    if (count < PRUNE_BATCH || stopped()) return deleted;
  }
};

/**
 * Deletes deliveries finished (delivered or failed) longer ago than `retentionMs`, at start and then
 * every min(retention, 1 h), in batches of PRUNE_BATCH, so that the outbox stays bounded under
 * steady load. Replicas on one PostgreSQL database may all run it: their batches skip each other's.
 * (Idempotency-Keys prune themselves as they are claimed, on every replica: see request-store.ts.)
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
    const now = clock.now();
    const before = new Date(now - retentionMs);
    let deleted = 0;
    try {
      deleted = await inBatches(
        () => store.pruneFinished(before, PRUNE_BATCH),
        () => stopped,
      );
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
