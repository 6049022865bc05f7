// Apart from config.ts, whose validation (zod) the delivery thread does not need to load.

export const DAY_MS = 86_400_000;

/**
 * Webhook delivery defaults: the attempt timeout, the delays before each retry (then `failed`), how
 * long finished deliveries are kept, and how long an endpoint may fail every delivery before it is
 * disabled.
 */
export const WEBHOOK_DEFAULTS = {
  timeoutMs: 15_000,
  retryDelaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
  retentionMs: 30 * DAY_MS,
  disableAfterMs: 5 * DAY_MS,
} as const;
