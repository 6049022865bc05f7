import { WEBHOOK_ENDPOINTS_MAX } from '@org/plant-contract';
import { Counter, Gauge, type Registry } from 'prom-client';
import { throttledRead } from '../../ops/throttled-read.ts';
import type { WebhookStore } from '../../store/webhook-store.ts';

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'gone' | 'lost_lease';

export type WebhookMetrics = { countAttempt(outcome: DeliveryOutcome): void };

/**
 * Endpoints whose delivery lag is reported at most, the longest waiting first: as many as may be
 * registered, so the label set stays bounded whatever the store holds.
 */
export const LAG_ENDPOINTS_MAX = WEBHOOK_ENDPOINTS_MAX;

/**
 * The delivery metrics, on the service's registry: attempts by outcome, and the backlog read from
 * the store (so every replica reports the shared outbox of PostgreSQL) at most once a second, in
 * all and per endpoint.
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
  const readLag = throttledRead(() => store.backlogByEndpoint(LAG_ENDPOINTS_MAX));
  new Gauge({
    name: 'plant_webhook_endpoint_lag_seconds',
    help: `Age of the oldest pending webhook delivery of each enabled endpoint with any pending, by endpoint id (the ${LAG_ENDPOINTS_MAX} longest waiting at most): a receiver falling behind.`,
    labelNames: ['endpoint'] as const,
    registers: [registry],
    async collect() {
      // Only the endpoints behind now: one delivered or deleted since the last scrape leaves the set.
      this.reset();
      const lag = await readLag().catch(() => []);
      const now = Date.now();
      for (const { endpointId, oldestPendingAt } of lag)
        this.set({ endpoint: endpointId }, Math.max(0, (now - oldestPendingAt.getTime()) / 1000));
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
