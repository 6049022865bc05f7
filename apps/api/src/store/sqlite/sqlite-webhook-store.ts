import { randomUUID } from 'node:crypto';
import { WEBHOOK_PREVIOUS_SECRETS_MAX } from '@org/plant-contract';
import type { Clock } from '../../clock.ts';
import { DELIVERY_ROW_BYTES, ENDPOINTS_BYTES } from '../row-bytes.ts';
import { DELETE_BATCH, LAST_SEQ, registration, storedEventTypes } from '../store-shared.ts';
import type { AnnounceListeners, WebhookStore } from '../webhook-store.ts';
import type { Batches } from './protocol.ts';
import type { AttemptRecord } from './webhooks.ts';

/** The WebhookStore of SqlitePlantStore: its operations go in the store's batches. */
export const sqliteWebhookStore = (batches: Batches, clock: Clock, announced: AnnounceListeners): WebhookStore => {
  const { call } = batches;
  const store: WebhookStore = {
    createEndpoint: (endpoint, { perOwner, total }) => {
      const registered = registration(endpoint);
      const { id, url, description, eventTypes, payloadFormat, rateLimit, owner } = registered;
      return batches.submit(
        'createEndpoint',
        undefined,
        registered,
        id,
        url,
        description ?? null,
        storedEventTypes(eventTypes),
        payloadFormat,
        rateLimit ?? null,
        endpoint.secret,
        owner,
        perOwner,
        total,
      );
    },
    updateEndpoint: (id, { url, description, enabled, eventTypes, payloadFormat, rateLimit }) =>
      call(
        'updateEndpoint',
        id,
        url ?? null,
        description === undefined ? 0 : 1,
        description ?? null,
        enabled === undefined ? null : Number(enabled),
        eventTypes === undefined ? null : storedEventTypes(eventTypes),
        payloadFormat ?? null,
        rateLimit === undefined ? 0 : 1,
        rateLimit ?? null,
        clock.now(),
      ),
    rotateSecret: (id, secret, graceMs) =>
      call('rotateSecret', id, secret, graceMs, WEBHOOK_PREVIOUS_SECRETS_MAX, clock.now()),
    requeueFailed: (endpointId, since, limit) => call('requeueFailed', endpointId, since.getTime(), limit, clock.now()),
    expediteRetries: (endpointId, limit) => call('expediteRetries', endpointId, limit, clock.now()),
    retryDelivery: (endpointId, deliveryId) => call('retryDelivery', endpointId, deliveryId, clock.now()),
    endpointSecrets: () => call('endpointSecrets'),
    signingSecrets: (id) => call('signingSecrets', id, clock.now()),
    replaceSecret: (id, which, from, to) => call('replaceSecret', id, which, from, to),
    listEndpoints: (owner) =>
      batches.submitLarge(ENDPOINTS_BYTES, 'listEndpoints', undefined, undefined, owner ?? null),
    getEndpoint: (id) => call('getEndpoint', id),
    deleteEndpoint: async (id) => {
      // In batches, each its own transaction: plant operations take turns with a large deletion.
      for (;;) {
        const deleted = await call('deleteEndpoint', id, DELETE_BATCH);
        if (deleted !== false) return deleted === true;
      }
    },
    listDeliveries: async (endpointId, limit, before = LAST_SEQ) => {
      // Listing answers every announcement made before it, fanned out in bounded batches, each its
      // own transaction: plant operations take turns with a large fan-out.
      let last: bigint | null = null;
      do last = await call('fanOut', last);
      while (last !== null);
      return batches.submitLarge(
        limit * DELIVERY_ROW_BYTES,
        'listDeliveries',
        undefined,
        undefined,
        endpointId,
        limit,
        before,
      );
    },
    claimDue: ({ limit, leaseMs, perEndpoint, room, onRateLimited }) => {
      const token = randomUUID();
      const now = clock.now();
      return batches.submit(
        'claimDue',
        undefined,
        { token, onRateLimited },
        now,
        limit,
        now + leaseMs,
        token,
        perEndpoint,
        [...room],
      );
    },
    recordAttempt: async (claim, result) => (await store.recordAttempts([{ claim, result }]))[0] === true,
    recordAttempts: (attempts) => {
      const now = clock.now();
      const records = attempts.map(
        ({ claim, result }): AttemptRecord => [
          claim.seq,
          claim.leaseToken,
          result.outcome,
          'status' in result && result.status !== undefined ? result.status : null,
          'error' in result ? result.error : null,
          result.outcome === 'retry' ? now + result.retryInMs : null,
          claim.endpointId,
        ],
      );
      return call('recordAttempts', now, records);
    },
    backlog: () => call('backlog'),
    backlogByEndpoint: (limit) => call('backlogByEndpoint', limit),
    disableEndpoint: (id, reason, failingSince) =>
      call('disableEndpoint', id, reason, failingSince === undefined ? null : failingSince.getTime()),
    pruneFinished: (before, limit) => call('pruneFinished', before.getTime(), limit),
    onAnnounce: (listener) => announced.add(listener),
  };
  return store;
};
