import { Counter, Gauge, type Registry } from 'prom-client';
import { throttledRead } from '../ops/throttled-read.ts';
import type { WebhookStore } from '../store/webhook-store.ts';

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'gone' | 'lost_lease';

export type WebhookMetrics = { countAttempt(outcome: DeliveryOutcome): void };

/**
 * The delivery metrics, on the service's registry: attempts by outcome, and the backlog read from
 * the store (so every replica reports the shared outbox of PostgreSQL) at most once a second.
 */
export const createWebhookMetrics = (registry: Registry, store: WebhookStore): WebhookMetrics => {
  const attempts = new Counter({
    name: 'plant_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered (2xx), retry (scheduled again), failed (no retry left), gone (410: endpoint disabled), lost_lease (another worker took over).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // One store query serves both gauges of a scrape, and every scrape within a second.
  const readBacklog = throttledRead(() => store.backlog());
  new Gauge({
    name: 'plant_webhook_deliveries_pending',
    help: 'Webhook deliveries to enabled endpoints not yet delivered or failed.',
    registers: [registry],
    async collect() {
      this.set(
        await readBacklog().then(
          ({ pending }) => pending,
          () => Number.NaN,
        ),
      );
    },
  });
  new Gauge({
    name: 'plant_webhook_oldest_pending_age_seconds',
    help: 'Age of the oldest pending webhook delivery (0 when none is pending).',
    registers: [registry],
    async collect() {
      this.set(
        await readBacklog().then(
          ({ oldestPendingAt }) => (oldestPendingAt ? Math.max(0, (Date.now() - oldestPendingAt.getTime()) / 1000) : 0),
          () => Number.NaN,
        ),
      );
    },
  });
  for (const outcome of ['delivered', 'retry', 'failed', 'gone'] as const) attempts.inc({ outcome }, 0);
  // One child per outcome: counting an attempt then hashes no labels.
  const byOutcome = new Map<DeliveryOutcome, { inc(): void }>();
  return {
    countAttempt: (outcome) => {
      let child = byOutcome.get(outcome);
      if (child === undefined) {
        child = attempts.labels({ outcome });
        byOutcome.set(outcome, child);
      }
      child.inc();
    },
  };
};
