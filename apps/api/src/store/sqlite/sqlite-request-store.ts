import type { RequestStore } from '../request-store.ts';
import type { Batches } from './protocol.ts';

/** The RequestStore of SqlitePlantStore: its operations go in the store's batches. */
export const sqliteRequestStore = ({ call }: Batches): RequestStore => ({
  claimIdempotencyKey: ({ key, principal, fingerprint, at, expiredBefore, staleBefore, maxPerPrincipal }) =>
    call(
      'claimIdempotencyKey',
      key,
      principal,
      fingerprint,
      at.getTime(),
      expiredBefore.getTime(),
      staleBefore.getTime(),
      maxPerPrincipal,
    ),
  finishIdempotencyKey: async (key, fingerprint, status, body) => {
    await call('finishIdempotencyKey', key, fingerprint, status, body);
  },
  releaseIdempotencyKey: async (key, fingerprint) => {
    await call('releaseIdempotencyKey', key, fingerprint);
  },
  plainKeptAnswers: (limit) => call('plainKeptAnswers', limit),
  replaceKeptAnswer: (key, from, to) => call('replaceKeptAnswer', key, from, to),
  takeWebhookTest: (key, at, most, windowMs) => call('takeWebhookTest', key, at.getTime(), most, windowMs),
});
