import { WEBHOOK_PREVIOUS_SECRETS_MAX } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';
import type { Tracing } from '../../src/ops/tracing-hooks.ts';
import type { PlantStore } from '../../src/store/plant-store.ts';
import type {
  ClaimedDelivery,
  EndpointBacklog,
  NewStoredEndpoint,
  StoredEndpoint,
} from '../../src/store/webhook-store.ts';

let endpointCount = 0;
const newEndpoint = (overrides: Partial<NewStoredEndpoint> = {}): NewStoredEndpoint => {
  endpointCount += 1;
  return {
    // Padded: endpoints registered within one millisecond are listed in the order of their ids.
    id: `ep_test${String(endpointCount).padStart(6, '0')}`,
    url: `https://receiver.example.com/hooks/${endpointCount}`,
    secret: `whsec_${Buffer.alloc(32, endpointCount).toString('base64')}`,
    owner: 'operator',
    ...overrides,
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Leases, retries and rotation graces are timed by the store (PostgreSQL's now(), the embedded
 * store's clock), so each test pairs a span that outlasts any stall of the test (a minute) with one
 * that has surely run out after PASSED_MS: both outcomes hold however slow the machine, and a
 * stall only makes the short one more surely over.
 */
const HELD_MS = 60_000;
const PASSED_MS = 20;

/**
 * After a migration met two endpoints with one URL (ep_old, then ep_dup, on
 * https://hooks.example.com/a): both are kept, the older holds the URL, and the later one may move
 * to a URL of its own, which it then holds.
 */
export const expectDuplicateUrlsKept = async (store: PlantStore): Promise<void> => {
  expect((await store.webhooks.listEndpoints()).map((endpoint) => endpoint.id)).toStrictEqual(['ep_old', 'ep_dup']);
  // Registered before event types: they receive creations, as they did.
  for (const endpoint of await store.webhooks.listEndpoints()) expect(endpoint.eventTypes).toStrictEqual(['newPlant']);
  const again = { id: 'ep_new', url: 'https://hooks.example.com/a', secret: 'whsec_c', owner: 'operator' };
  expect(await store.webhooks.createEndpoint(again, { perOwner: 100, total: 10_000 })).toStrictEqual({
    outcome: 'url-taken',
    holder: 'ep_old',
  });
  expect(await store.webhooks.updateEndpoint('ep_dup', { url: 'https://hooks.example.com/b' })).toMatchObject({
    outcome: 'updated',
  });
  const other = { ...again, url: 'https://hooks.example.com/b' };
  expect(await store.webhooks.createEndpoint(other, { perOwner: 100, total: 10_000 })).toStrictEqual({
    outcome: 'url-taken',
    holder: 'ep_dup',
  });
};

/**
 * After the migration that gave endpoints owners met ep_before (registered before it): the operator
 * owns it, it is listed among the operator's and no one else's.
 */
export const expectEndpointsGivenToOperator = async (store: PlantStore): Promise<void> => {
  expect(await store.webhooks.getEndpoint('ep_before')).toMatchObject({ id: 'ep_before', owner: 'operator' });
  expect((await store.webhooks.listEndpoints('operator')).map(({ id }) => id)).toStrictEqual(['ep_before']);
  expect(await store.webhooks.listEndpoints('token:team-a')).toStrictEqual([]);
  // The operator keeps its one endpoint per URL; another principal may register the same URL.
  const again = { id: 'ep_again', url: 'https://hooks.example.com/a', secret: 'whsec_c' };
  const caps = { perOwner: 100, total: 1000 };
  expect(await store.webhooks.createEndpoint({ ...again, owner: 'operator' }, caps)).toStrictEqual({
    outcome: 'url-taken',
    holder: 'ep_before',
  });
  expect(await store.webhooks.createEndpoint({ ...again, owner: 'token:team-a' }, caps)).toMatchObject({
    outcome: 'created',
  });
};

/** The traceparent every create of a store opened with `fixedTracing` keeps. */
export const STORED_TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** Tracing hooks whose every span, and every caller's, is STORED_TRACEPARENT; they export nothing. */
export const fixedTracing: Tracing = {
  storeOperation: () => ({ traceparent: STORED_TRACEPARENT, end: () => {} }),
  traceparent: () => STORED_TRACEPARENT,
  deliveryAttempt: () => ({ traceparent: STORED_TRACEPARENT, end: () => {} }),
  shutdown: async () => {},
};

const claimAll = (store: PlantStore) =>
  store.webhooks.claimDue({ limit: 10, leaseMs: 60_000, perEndpoint: 10, room: new Map() });

/**
 * A create made with tracing on keeps its traceparent with its outbox event; the delivery fanned
 * out from it carries the traceparent even once the store was closed and opened again, untraced.
 */
export const expectTraceparentKept = async (traced: PlantStore, reopen: () => Promise<PlantStore>): Promise<void> => {
  const endpoint = newEndpoint();
  await traced.webhooks.createEndpoint(endpoint, { perOwner: 100, total: 10_000 });
  await traced.create({ id: 41n, name: 'Traced' });
  await traced.close();
  const store = await reopen();
  await store.create({ id: 42n, name: 'Untraced' });
  const claimed = (await claimAll(store)).sort((a, b) => Number(a.plantId - b.plantId));
  expect(claimed.map(({ plantId, traceparent }) => ({ id: plantId, traceparent }))).toStrictEqual([
    { id: 41n, traceparent: STORED_TRACEPARENT },
    { id: 42n, traceparent: undefined },
  ]);
};

/**
 * After the migration that added traceparents met an event announced before it (plant 7 to
 * ep_before): its delivery is claimed as before, with no traceparent.
 */
export const expectOutboxKeptWithoutTraceparent = async (store: PlantStore): Promise<void> => {
  const [claimed] = await claimAll(store);
  expect(claimed).toMatchObject({ endpointId: 'ep_before', type: 'newPlant', data: '{"id":7,"name":"Announced"}' });
  expect(claimed).not.toHaveProperty('traceparent');
};

/** The webhook behaviour every backend must show; part of describePlantStore. */
export const describeWebhookStore = (store: () => PlantStore): void => {
  const claim = (limit: number, leaseMs: number, perEndpoint = limit, room = new Map<string, number>()) =>
    store().webhooks.claimDue({ limit, leaseMs, perEndpoint, room });

  const register = async (endpoint = newEndpoint()): Promise<StoredEndpoint> => {
    const created = await store().webhooks.createEndpoint(endpoint, { perOwner: 100, total: 10_000 });
    if (created.outcome !== 'created') throw new Error(`The endpoint was not registered: ${created.outcome}.`);
    return created.endpoint;
  };

  describe('deletion events', () => {
    it('announces a deletion with the plant as it was, to the endpoints that receive deletions only', async () => {
      const deletions = await register(newEndpoint({ eventTypes: ['plantDeleted'] }));
      const creations = await register();
      await store().create({ id: 51n, name: 'Brief', tag: 'gone' });
      expect(await store().delete(51n)).toBe(true);
      expect(await store().delete(51n)).toBe(false);
      // In the order announced: claims take turns across endpoints in no set order.
      const claimed = (await claim(10, HELD_MS)).sort((a, b) => Number(a.seq - b.seq));
      expect(claimed.map(({ endpointId, type, plantId, data }) => ({ endpointId, type, plantId, data }))).toStrictEqual(
        [
          { endpointId: creations.id, type: 'newPlant', plantId: 51n, data: '{"id":51,"name":"Brief","tag":"gone"}' },
          {
            endpointId: deletions.id,
            type: 'plantDeleted',
            plantId: 51n,
            data: '{"id":51,"plant":{"id":51,"name":"Brief","tag":"gone"}}',
          },
        ],
      );
    });

    it('announces no deletion while no enabled endpoint receives deletions, and follows a change of types', async () => {
      const endpoint = await register();
      await store().create({ id: 52n, name: 'Quiet' });
      await store().create({ id: 53n, name: 'Heard' });
      expect(await store().delete(52n)).toBe(true);
      const updated = await store().webhooks.updateEndpoint(endpoint.id, { eventTypes: ['plantDeleted'] });
      expect(updated).toMatchObject({ outcome: 'updated', endpoint: { eventTypes: ['plantDeleted'] } });
      expect(await store().delete(53n)).toBe(true);
      const claimed = (await claim(10, HELD_MS)).sort((a, b) => Number(a.seq - b.seq));
      // The creations were announced before the change, under newPlant; after it, the deletion of 53.
      expect(claimed.map(({ type, plantId }) => [type, plantId])).toStrictEqual([
        ['newPlant', 52n],
        ['newPlant', 53n],
        ['plantDeleted', 53n],
      ]);
    });
  });

  describe('webhook endpoints', () => {
    it('registers endpoints, lists them oldest first without secrets, reads and deletes them', async () => {
      const first = newEndpoint({ description: 'Inventory' });
      const second = newEndpoint();
      expect(await store().webhooks.createEndpoint(first, { perOwner: 100, total: 10_000 })).toStrictEqual({
        outcome: 'created',
        endpoint: {
          id: first.id,
          url: first.url,
          description: 'Inventory',
          eventTypes: ['newPlant'],
          payloadFormat: 'plain',
          enabled: true,
          createdAt: expect.any(Date),
          owner: 'operator',
        },
      });
      const registered = await store().webhooks.createEndpoint(second, { perOwner: 100, total: 10_000 });
      const listed = await store().webhooks.listEndpoints();
      expect(listed.map((endpoint) => endpoint.id)).toStrictEqual([first.id, second.id]);
      expect(registered).toStrictEqual({ outcome: 'created', endpoint: listed[1] });
      expect(listed[1]).toStrictEqual({
        id: second.id,
        url: second.url,
        eventTypes: ['newPlant'],
        payloadFormat: 'plain',
        enabled: true,
        createdAt: expect.any(Date),
        owner: 'operator',
      });
      for (const endpoint of listed) expect(endpoint).not.toHaveProperty('secret');
      expect(await store().webhooks.getEndpoint(second.id)).toStrictEqual(listed[1]);
      expect(await store().webhooks.getEndpoint('ep_unknown')).toBeUndefined();

      expect(await store().webhooks.deleteEndpoint(first.id)).toBe(true);
      expect(await store().webhooks.deleteEndpoint(first.id)).toBe(false);
      expect(await store().webhooks.getEndpoint(first.id)).toBeUndefined();
      expect(await store().webhooks.listDeliveries(first.id, 10)).toBeUndefined();
      expect(await store().webhooks.listDeliveries(second.id, 10)).toStrictEqual([]);
    });
  });

  it('lists one owner’s endpoints, or every owner’s, and caps each owner and all of them together', async () => {
    const caps = { perOwner: 2, total: 3 };
    const a = [newEndpoint({ owner: 'token:a' }), newEndpoint({ owner: 'token:a' })];
    for (const endpoint of a)
      expect(await store().webhooks.createEndpoint(endpoint, caps)).toMatchObject({ outcome: 'created' });
    expect(await store().webhooks.createEndpoint(newEndpoint({ owner: 'token:a' }), caps)).toStrictEqual({
      outcome: 'too-many',
    });
    const b = newEndpoint({ owner: 'token:b', url: a[0]?.url as string });
    expect(await store().webhooks.createEndpoint(b, caps)).toMatchObject({
      outcome: 'created',
      endpoint: { id: b.id, owner: 'token:b' },
    });
    expect(await store().webhooks.createEndpoint(newEndpoint({ owner: 'token:c' }), caps)).toStrictEqual({
      outcome: 'too-many-in-all',
    });
    expect((await store().webhooks.listEndpoints('token:a')).map(({ id }) => id)).toStrictEqual(a.map(({ id }) => id));
    expect((await store().webhooks.listEndpoints('token:b')).map(({ id, owner }) => [id, owner])).toStrictEqual([
      [b.id, 'token:b'],
    ]);
    expect(await store().webhooks.listEndpoints('token:c')).toStrictEqual([]);
    expect(await store().webhooks.listEndpoints()).toHaveLength(3);
    // A URL another owner's endpoint has is no conflict for a PATCH either; one of its own owner's is.
    const moved = await store().webhooks.updateEndpoint(b.id, { url: a[1]?.url as string });
    expect(moved).toMatchObject({ outcome: 'updated' });
    expect(await store().webhooks.updateEndpoint(a[0]?.id as string, { url: a[1]?.url as string })).toStrictEqual({
      outcome: 'url-taken',
      holder: a[1]?.id,
    });
  });

  it('registers no more than the most endpoints allowed', async () => {
    for (let index = 0; index < 3; index++)
      expect(await store().webhooks.createEndpoint(newEndpoint(), { perOwner: 3, total: 10_000 })).toMatchObject({
        outcome: 'created',
      });
    const extra = newEndpoint();
    expect(await store().webhooks.createEndpoint(extra, { perOwner: 3, total: 10_000 })).toStrictEqual({
      outcome: 'too-many',
    });
    expect(await store().webhooks.getEndpoint(extra.id)).toBeUndefined();
    expect(await store().webhooks.listEndpoints()).toHaveLength(3);
  });

  describe('endpoint operations', () => {
    it('keeps one endpoint per URL, also when registrations race and when an update moves to a taken URL', async () => {
      const first = await register();
      const same = newEndpoint({ url: first.url });
      expect(await store().webhooks.createEndpoint(same, { perOwner: 100, total: 10_000 })).toStrictEqual({
        outcome: 'url-taken',
        holder: first.id,
      });
      expect(await store().webhooks.getEndpoint(same.id)).toBeUndefined();

      const url = 'https://receiver.example.com/raced';
      const racing = Array.from({ length: 5 }, () => newEndpoint({ url }));
      const outcomes = await Promise.all(
        racing.map((endpoint) => store().webhooks.createEndpoint(endpoint, { perOwner: 100, total: 10_000 })),
      );
      const winners = outcomes.filter((outcome) => outcome.outcome === 'created');
      expect(winners).toHaveLength(1);
      const winner = (winners[0] as { endpoint: StoredEndpoint }).endpoint.id;
      for (const outcome of outcomes.filter((candidate) => candidate.outcome !== 'created'))
        expect(outcome).toStrictEqual({ outcome: 'url-taken', holder: winner });

      expect(await store().webhooks.updateEndpoint(first.id, { url })).toStrictEqual({
        outcome: 'url-taken',
        holder: winner,
      });
      expect(await store().webhooks.getEndpoint(first.id)).toStrictEqual(first);
      // Its own URL is no conflict; the freed URL may be taken by another.
      expect(await store().webhooks.updateEndpoint(first.id, { url: first.url })).toStrictEqual({
        outcome: 'updated',
        endpoint: first,
      });
      expect(await store().webhooks.deleteEndpoint(winner)).toBe(true);
      expect(await store().webhooks.updateEndpoint(first.id, { url })).toMatchObject({
        outcome: 'updated',
        endpoint: { id: first.id, url },
      });
    });

    it('updates what is given, removes a description with null, and answers not-found for an unknown id', async () => {
      const endpoint = await register(newEndpoint({ description: 'Before' }));
      const url = 'https://receiver.example.com/moved';
      expect(await store().webhooks.updateEndpoint(endpoint.id, { url, description: 'After' })).toStrictEqual({
        outcome: 'updated',
        endpoint: { ...endpoint, url, description: 'After' },
      });
      expect(await store().webhooks.updateEndpoint(endpoint.id, { enabled: false })).toStrictEqual({
        outcome: 'updated',
        endpoint: {
          ...endpoint,
          url,
          description: 'After',
          enabled: false,
          disabledReason: 'Disabled by a PATCH request.',
        },
      });
      const { description: _dropped, ...withoutDescription } = endpoint;
      expect(await store().webhooks.updateEndpoint(endpoint.id, { description: null, enabled: true })).toStrictEqual({
        outcome: 'updated',
        endpoint: { ...withoutDescription, url },
      });
      expect(await store().webhooks.updateEndpoint('ep_unknown', { enabled: true })).toStrictEqual({
        outcome: 'not-found',
      });
    });

    it('a PATCH disables: pending deliveries wait unclaimed; enabling clears the reason and the failing streak, and they go out again', async () => {
      const endpoint = await register();
      for (const id of [30n, 31n, 32n]) await store().create({ id, name: `Plant ${id}` });
      const [failing] = await claim(1, 60_000);
      // A failing streak starts.
      await store().webhooks.recordAttempt(failing as ClaimedDelivery, { outcome: 'retry', retryInMs: 0, error: 'x' });

      const disabled = await store().webhooks.updateEndpoint(endpoint.id, { enabled: false });
      expect(disabled).toMatchObject({
        outcome: 'updated',
        endpoint: { enabled: false, disabledReason: 'Disabled by a PATCH request.' },
      });
      expect(await claim(10, 60_000)).toStrictEqual([]);
      const waiting = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
      expect(waiting.map((delivery) => delivery.status)).toStrictEqual(['pending', 'pending', 'pending']);
      // Disabling again keeps the first reason.
      await store().webhooks.updateEndpoint(endpoint.id, { enabled: false, description: 'Paused' });
      expect(await store().webhooks.getEndpoint(endpoint.id)).toMatchObject({
        disabledReason: 'Disabled by a PATCH request.',
      });

      const enabled = await store().webhooks.updateEndpoint(endpoint.id, { enabled: true });
      expect(enabled).toMatchObject({ outcome: 'updated', endpoint: { enabled: true } });
      expect(enabled.outcome === 'updated' && enabled.endpoint).not.toHaveProperty('disabledReason');
      const again = await claim(10, 60_000);
      expect(again.map((delivery) => delivery.id).sort()).toStrictEqual(waiting.map((delivery) => delivery.id).sort());
      // The streak started before the disabling is forgotten: auto-disable counts afresh.
      expect(await store().webhooks.disableEndpoint(endpoint.id, 'Every delivery failed.', new Date())).toBe(false);
    });

    it('enabling an endpoint a 410 disabled clears its reason; its pending deliveries go out again', async () => {
      const endpoint = await register();
      for (const id of [33n, 34n]) await store().create({ id, name: `Plant ${id}` });
      const [gone] = await claim(1, 60_000);
      await store().webhooks.recordAttempt(gone as ClaimedDelivery, {
        outcome: 'gone',
        status: 410,
        error: 'The receiver answered 410 Gone.',
      });
      expect(await store().webhooks.disableEndpoint(endpoint.id, 'The receiver answered 410 Gone.')).toBe(true);
      expect(await claim(10, 60_000)).toStrictEqual([]);

      await store().webhooks.updateEndpoint(endpoint.id, { enabled: true });
      expect(await store().webhooks.getEndpoint(endpoint.id)).not.toHaveProperty('disabledReason');
      const [pending] = await claim(10, 60_000);
      expect(pending?.id).not.toBe(gone?.id);
      expect(pending?.plantId).toBe(34n);
    });

    it('after a rotation claims carry the previous secret until it expires', async () => {
      const lasting = await register();
      const ending = await register();
      const [lastingSecret, endingSecret] = await store().webhooks.endpointSecrets();
      expect(lastingSecret).toStrictEqual({
        id: lasting.id,
        secret: expect.stringMatching(/^whsec_/),
        previousSecrets: [],
      });
      const fresh = `whsec_${Buffer.alloc(32, 200).toString('base64')}`;
      expect(await store().webhooks.rotateSecret(lasting.id, fresh, HELD_MS)).toBe(true);
      expect(await store().webhooks.rotateSecret(ending.id, fresh, 1)).toBe(true);
      expect(await store().webhooks.rotateSecret('ep_unknown', fresh, HELD_MS)).toBe(false);
      await store().create({ id: 40n, name: 'Rotated' });
      await sleep(PASSED_MS);
      const claimed = await claim(2, 100);
      const byEndpoint = new Map(claimed.map((delivery) => [delivery.endpointId, delivery]));
      expect(byEndpoint.get(lasting.id)).toMatchObject({ secret: fresh, previousSecrets: [lastingSecret?.secret] });
      expect(byEndpoint.get(ending.id)?.secret).toBe(fresh);
      expect(byEndpoint.get(ending.id)).not.toHaveProperty('previousSecrets');
      // Stored until a rotation drops it: the grace only decides what a claim carries.
      expect(await store().webhooks.endpointSecrets()).toStrictEqual([
        { id: lasting.id, secret: fresh, previousSecrets: [lastingSecret?.secret] },
        { id: ending.id, secret: fresh, previousSecrets: [endingSecret?.secret] },
      ]);
    });

    it('keeps every secret rotated out while its grace lasts, newest first, at most the documented number', async () => {
      const endpoint = await register();
      const [{ secret: first } = { secret: '' }] = await store().webhooks.endpointSecrets();
      const secretNumber = (n: number) => `whsec_${Buffer.alloc(32, 210 + n).toString('base64')}`;
      // Two rotations in a row: the first secret still signs, beside the second.
      await store().webhooks.rotateSecret(endpoint.id, secretNumber(1), HELD_MS);
      await store().webhooks.rotateSecret(endpoint.id, secretNumber(2), HELD_MS);
      expect(await store().webhooks.signingSecrets(endpoint.id)).toStrictEqual({
        secret: secretNumber(2),
        previousSecrets: [secretNumber(1), first],
      });
      for (let n = 3; n <= WEBHOOK_PREVIOUS_SECRETS_MAX + 2; n++) {
        await store().webhooks.rotateSecret(endpoint.id, secretNumber(n), HELD_MS);
      }
      const newest = WEBHOOK_PREVIOUS_SECRETS_MAX + 2;
      expect(await store().webhooks.signingSecrets(endpoint.id)).toStrictEqual({
        secret: secretNumber(newest),
        previousSecrets: Array.from({ length: WEBHOOK_PREVIOUS_SECRETS_MAX }, (_, index) =>
          secretNumber(newest - 1 - index),
        ),
      });
      // One whose grace ended is dropped at the next rotation, whatever room is left.
      const other = await register();
      await store().webhooks.rotateSecret(other.id, secretNumber(20), 1);
      await sleep(PASSED_MS);
      await store().webhooks.rotateSecret(other.id, secretNumber(21), HELD_MS);
      const secrets = (await store().webhooks.endpointSecrets()).find(({ id }) => id === other.id);
      expect(secrets?.previousSecrets).toStrictEqual([secretNumber(20)]);
    });

    it('answers the secrets that sign an endpoint now, the previous one only during its grace', async () => {
      const lasting = await register();
      const ending = await register();
      const [lastingSecret] = await store().webhooks.endpointSecrets();
      expect(await store().webhooks.signingSecrets(lasting.id)).toStrictEqual({ secret: lastingSecret?.secret });
      const fresh = `whsec_${Buffer.alloc(32, 201).toString('base64')}`;
      await store().webhooks.rotateSecret(lasting.id, fresh, HELD_MS);
      await store().webhooks.rotateSecret(ending.id, fresh, 1);
      await sleep(PASSED_MS);
      expect(await store().webhooks.signingSecrets(lasting.id)).toStrictEqual({
        secret: fresh,
        previousSecrets: [lastingSecret?.secret],
      });
      expect(await store().webhooks.signingSecrets(ending.id)).toStrictEqual({ secret: fresh });
      expect(await store().webhooks.signingSecrets('ep_unknown')).toBeUndefined();
    });

    it('replaces a stored secret only if it is still the one read', async () => {
      const endpoint = await register();
      const [{ secret } = { secret: '' }] = await store().webhooks.endpointSecrets();
      expect(await store().webhooks.replaceSecret(endpoint.id, 'secret', 'whsec_other', 'sealed')).toBe(false);
      expect(await store().webhooks.replaceSecret(endpoint.id, 'secret', secret, 'sealed')).toBe(true);
      expect(await store().webhooks.replaceSecret(endpoint.id, 'previousSecret', secret, 'sealed')).toBe(false);
      expect(await store().webhooks.endpointSecrets()).toStrictEqual([
        { id: endpoint.id, secret: 'sealed', previousSecrets: [] },
      ]);
      await store().webhooks.rotateSecret(endpoint.id, 'whsec_new', HELD_MS);
      expect(await store().webhooks.replaceSecret(endpoint.id, 'previousSecret', 'whsec_other', 'x')).toBe(false);
      expect(await store().webhooks.replaceSecret(endpoint.id, 'previousSecret', 'sealed', 'sealed "again"')).toBe(
        true,
      );
      expect(await store().webhooks.endpointSecrets()).toStrictEqual([
        { id: endpoint.id, secret: 'whsec_new', previousSecrets: ['sealed "again"'] },
      ]);
      expect(await store().webhooks.signingSecrets(endpoint.id)).toStrictEqual({
        secret: 'whsec_new',
        previousSecrets: ['sealed "again"'],
      });
    });

    it('requeues failed deliveries created since a time, in batches, oldest first, with their ids', async () => {
      const endpoint = await register();
      const before = new Date(Date.now() - 1);
      for (const id of [50n, 51n, 52n, 53n]) await store().create({ id, name: `Plant ${id}` });
      const claimed = await claim(10, 60_000);
      for (const delivery of claimed)
        await store().webhooks.recordAttempt(delivery, {
          outcome: 'failed',
          error: 'Connection failed: ECONNREFUSED.',
        });
      const failed = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
      expect(failed.every((delivery) => delivery.status === 'failed')).toBe(true);

      expect(await store().webhooks.requeueFailed(endpoint.id, new Date(Date.now() + 60_000), 10)).toBe(0);
      expect(await store().webhooks.requeueFailed(endpoint.id, before, 3)).toBe(3);
      const listed = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
      // Oldest first: the newest is still failed.
      expect(listed.map((delivery) => delivery.status)).toStrictEqual(['failed', 'pending', 'pending', 'pending']);
      expect(await store().webhooks.requeueFailed(endpoint.id, before, 3)).toBe(1);
      const again = await claim(10, 60_000);
      expect(again.map((delivery) => delivery.id).sort()).toStrictEqual(claimed.map((delivery) => delivery.id).sort());
      expect(again.every((delivery) => delivery.attempts === 1)).toBe(true);
      for (const delivery of again) await store().webhooks.recordAttempt(delivery, { outcome: 'failed', error: 'x' });

      // Nothing is requeued for a disabled endpoint.
      await store().webhooks.updateEndpoint(endpoint.id, { enabled: false });
      expect(await store().webhooks.requeueFailed(endpoint.id, before, 10)).toBe(0);
    });

    it('brings forward the retries of deliveries that failed twice, not leased ones, not the first retries', async () => {
      const endpoint = await register();
      const other = await register();
      for (const id of [70n, 71n, 72n]) await store().create({ id, name: `Plant ${id}` });
      const retry = (delivery: ClaimedDelivery, retryInMs: number) =>
        store().webhooks.recordAttempt(delivery, { outcome: 'retry', retryInMs, status: 500, error: 'x' });
      const byPlant = (claimed: ClaimedDelivery[], endpointId: string, id: bigint) =>
        claimed.find((delivery) => delivery.endpointId === endpointId && delivery.plantId === id) as ClaimedDelivery;
      // Every delivery fails once; all but 71 (of `endpoint`) soon due again.
      const first = await claim(10, HELD_MS);
      expect(first).toHaveLength(6);
      for (const delivery of first)
        await retry(delivery, delivery.endpointId === endpoint.id && delivery.plantId === 71n ? HELD_MS : PASSED_MS);
      await sleep(PASSED_MS * 2);
      // They fail again: 72 soon due again, the others an hour away.
      const second = await claim(10, HELD_MS);
      expect(second).toHaveLength(5);
      for (const delivery of second) await retry(delivery, delivery.plantId === 72n ? PASSED_MS : HELD_MS);
      await sleep(PASSED_MS * 2);
      // Both 72s are leased: out of reach.
      const leased = await claim(10, HELD_MS);
      expect(leased.map((delivery) => delivery.plantId)).toStrictEqual([72n, 72n]);

      expect(await store().webhooks.expediteRetries(endpoint.id, 10)).toBe(1);
      const expedited = await claim(10, HELD_MS);
      expect(expedited.map((delivery) => [delivery.endpointId, delivery.plantId, delivery.attempts])).toStrictEqual([
        [endpoint.id, 70n, 2],
      ]);
      // The other endpoint's, in batches.
      await retry(byPlant(expedited, endpoint.id, 70n), HELD_MS);
      expect(await store().webhooks.expediteRetries(other.id, 1)).toBe(1);
      expect(await store().webhooks.expediteRetries(other.id, 10)).toBe(1);
      expect(await store().webhooks.expediteRetries(other.id, 10)).toBe(0);
    });

    it('retries one delivery whatever its status; unknown or foreign ids and disabled endpoints are refused', async () => {
      const endpoint = await register();
      const other = await register();
      await store().create({ id: 60n, name: 'Again' });
      const [delivery] = (await store().webhooks.listDeliveries(endpoint.id, 1)) ?? [];
      const id = delivery?.id ?? '';
      const [claimed] = (await claim(10, 60_000)).filter((candidate) => candidate.id === id);
      await store().webhooks.recordAttempt(claimed as ClaimedDelivery, { outcome: 'delivered', status: 200 });

      expect(await store().webhooks.retryDelivery(endpoint.id, id)).toBe(true);
      const [pending] = (await store().webhooks.listDeliveries(endpoint.id, 1)) ?? [];
      expect(pending).toMatchObject({ id, status: 'pending', attempts: 1, lastStatus: 200 });
      expect(pending).not.toHaveProperty('deliveredAt');
      const claims = await claim(10, 60_000);
      expect(claims.map((candidate) => candidate.id)).toContain(id);

      expect(await store().webhooks.retryDelivery(other.id, id)).toBe(false);
      expect(await store().webhooks.retryDelivery(endpoint.id, 'msg_0000000000000000_1')).toBe(false);
      expect(await store().webhooks.retryDelivery(endpoint.id, 'nonsense')).toBe(false);
      expect(await store().webhooks.retryDelivery(endpoint.id, `${id}0`)).toBe(false);
      await store().webhooks.updateEndpoint(endpoint.id, { enabled: false });
      expect(await store().webhooks.retryDelivery(endpoint.id, id)).toBe(false);
    });
  });

  describe('the outbox', () => {
    it('announces nothing while no endpoint is registered', async () => {
      await store().create({ id: 1n, name: 'Unheard' });
      expect(await store().webhooks.backlog()).toStrictEqual({ pending: 0, oldestPendingAt: undefined });
      expect(await claim(10, 60_000)).toStrictEqual([]);
    });

    it("tells the process's listeners only of creates that announced a plant to an enabled endpoint", async () => {
      let heard = 0;
      const stopListening = store().webhooks.onAnnounce(() => {
        heard += 1;
      });
      await Promise.all([store().create({ id: 1n, name: 'Unheard' }), store().create({ id: 2n, name: 'Unheard' })]);
      expect(heard).toBe(0);
      await register();
      await Promise.all([store().create({ id: 3n, name: 'Heard' }), store().create({ id: 1n, name: 'Unheard' })]);
      expect(heard).toBe(1);
      // A replay announces nothing.
      await store().create({ id: 3n, name: 'Heard' });
      expect(heard).toBe(1);
      stopListening();
    });

    it('announces each created plant to each enabled endpoint once, exactly; replays and conflicts announce nothing', async () => {
      const a = await register();
      const b = await register();
      const big = 9223372036854775807n;
      expect((await store().create({ id: big, name: 'Max', tag: 'edge' })).outcome).toBe('created');
      expect((await store().create({ id: 2n, name: 'Fern' })).outcome).toBe('created');
      expect((await store().create({ id: 2n, name: 'Fern' })).outcome).toBe('replayed');
      expect((await store().create({ id: 2n, name: 'Other' })).outcome).toBe('conflict');

      for (const endpoint of [a, b]) {
        const deliveries = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
        // Newest first.
        expect(deliveries.map((delivery) => delivery.plantId)).toStrictEqual([2n, big]);
        for (const delivery of deliveries) {
          expect(delivery).toMatchObject({ endpointId: endpoint.id, status: 'pending', attempts: 0 });
          expect(delivery.id).toMatch(/^msg_[0-9a-f]{16}_\d+$/);
        }
      }
      expect((await store().webhooks.backlog()).pending).toBe(4);

      const claimed = await claim(10, 60_000);
      expect(claimed).toHaveLength(4);
      const forA = claimed.filter((delivery) => delivery.endpointId === a.id);
      expect(forA.map((delivery) => delivery.data).sort((x, y) => x.length - y.length)).toStrictEqual([
        '{"id":2,"name":"Fern"}',
        `{"id":${big},"name":"Max","tag":"edge"}`,
      ]);
      expect(forA[0]).toMatchObject({ url: a.url, secret: expect.stringMatching(/^whsec_/), attempts: 0 });
      // Every id is distinct: one webhook-id per plant and endpoint.
      expect(new Set(claimed.map((delivery) => delivery.id)).size).toBe(4);
    });

    it('counts announcements as pending at once, and gives an endpoint only the plants created since it was registered', async () => {
      const early = await register();
      for (const id of [20n, 21n, 22n]) await store().create({ id, name: `Plant ${id}` });
      const backlog = await store().webhooks.backlog();
      expect(backlog.pending).toBe(3);
      expect(backlog.oldestPendingAt).toBeInstanceOf(Date);
      await sleep(5);
      const late = await register();
      await store().create({ id: 23n, name: 'Plant 23' });
      expect((await store().webhooks.listDeliveries(early.id, 10))?.map((delivery) => delivery.plantId)).toStrictEqual([
        23n,
        22n,
        21n,
        20n,
      ]);
      expect((await store().webhooks.listDeliveries(late.id, 10))?.map((delivery) => delivery.plantId)).toStrictEqual([
        23n,
      ]);
      expect((await store().webhooks.backlog()).pending).toBe(5);
    });

    it("reports each enabled endpoint's oldest pending announcement, the longest waiting first, within a limit", async () => {
      const early = await register();
      await store().create({ id: 24n, name: 'Plant 24' });
      await sleep(5);
      const late = await register();
      await sleep(5);
      await store().create({ id: 25n, name: 'Plant 25' });
      // Counted whether fanned out to deliveries yet or not.
      const lag = await store().webhooks.backlogByEndpoint(10);
      expect(lag.map(({ endpointId }) => endpointId)).toStrictEqual([early.id, late.id]);
      const [earlyLag, lateLag] = lag as [EndpointBacklog, EndpointBacklog];
      expect(earlyLag.oldestPendingAt.getTime()).toBeLessThan(lateLag.oldestPendingAt.getTime());
      expect(lateLag.oldestPendingAt.getTime()).toBeGreaterThanOrEqual(late.createdAt.getTime());
      expect(await store().webhooks.backlogByEndpoint(1)).toStrictEqual([earlyLag]);

      // Once the oldest is delivered, the next one is the oldest.
      const claimed = await claim(10, 60_000);
      const first = claimed.find((delivery) => delivery.endpointId === early.id && delivery.plantId === 24n);
      await store().webhooks.recordAttempt(first as ClaimedDelivery, { outcome: 'delivered', status: 204 });
      const next = await store().webhooks.backlogByEndpoint(10);
      expect(next).toHaveLength(2);
      expect(next).toContainEqual({ endpointId: early.id, oldestPendingAt: lateLag.oldestPendingAt });
      expect(next).toContainEqual(lateLag);
      // A disabled endpoint's deliveries wait: not a backlog.
      await store().webhooks.disableEndpoint(early.id, 'Disabled by the test.');
      expect(await store().webhooks.backlogByEndpoint(10)).toStrictEqual([lateLag]);
      for (const delivery of claimed.filter(({ endpointId }) => endpointId === late.id))
        await store().webhooks.recordAttempt(delivery, { outcome: 'delivered', status: 204 });
      expect(await store().webhooks.backlogByEndpoint(10)).toStrictEqual([]);
    });

    it('leases what it claims: nobody else gets it until the lease runs out, and a lost lease cannot record', async () => {
      const endpoint = await register();
      await store().create({ id: 3n, name: 'Aloe' });
      await store().create({ id: 4n, name: 'Basil' });
      const [held] = await claim(1, HELD_MS);
      const [first] = await claim(1, 1);
      expect([held?.data, first?.data]).toStrictEqual(
        expect.arrayContaining(['{"id":3,"name":"Aloe"}', '{"id":4,"name":"Basil"}']),
      );
      await sleep(PASSED_MS);
      // The short lease ran out; the long one holds.
      const again = await claim(10, HELD_MS);
      expect(again.map((delivery) => delivery.id)).toStrictEqual([first?.id]);
      expect(
        await store().webhooks.recordAttempt(first as ClaimedDelivery, { outcome: 'delivered', status: 200 }),
      ).toBe(false);
      expect(
        await store().webhooks.recordAttempt(again[0] as ClaimedDelivery, { outcome: 'delivered', status: 204 }),
      ).toBe(true);
      expect(await store().webhooks.recordAttempt(held as ClaimedDelivery, { outcome: 'delivered', status: 200 })).toBe(
        true,
      );
      const delivered = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
      expect(delivered.find((delivery) => delivery.id === first?.id)).toMatchObject({
        status: 'delivered',
        attempts: 1,
        lastStatus: 204,
      });
      expect(delivered[0]?.deliveredAt).toBeInstanceOf(Date);
      expect(delivered[0]?.nextAttemptAt).toBeUndefined();
      expect(await store().webhooks.backlog()).toStrictEqual({ pending: 0, oldestPendingAt: undefined });
    });

    it('schedules a retry, which is claimable once due, and fails for good when told', async () => {
      const endpoint = await register();
      await store().create({ id: 4n, name: 'Ivy' });
      await store().create({ id: 5n, name: 'Moss' });
      const [later, soon] = await claim(10, HELD_MS);
      const before = Date.now();
      const retry = (claimed: ClaimedDelivery | undefined, retryInMs: number) =>
        store().webhooks.recordAttempt(claimed as ClaimedDelivery, {
          outcome: 'retry',
          retryInMs,
          status: 503,
          error: 'The receiver answered 503.',
        });
      expect(await retry(later, HELD_MS)).toBe(true);
      expect(await retry(soon, 1)).toBe(true);
      const listed = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
      const retrying = listed.find((delivery) => delivery.id === later?.id);
      expect(retrying).toMatchObject({
        status: 'pending',
        attempts: 1,
        lastStatus: 503,
        lastError: 'The receiver answered 503.',
      });
      expect(retrying?.nextAttemptAt?.getTime()).toBeGreaterThanOrEqual(before + HELD_MS);
      const backlog = await store().webhooks.backlog();
      expect(backlog.pending).toBe(2);
      expect(backlog.oldestPendingAt).toBeInstanceOf(Date);
      await sleep(PASSED_MS);
      // Only the one due is claimed.
      const due = await claim(10, HELD_MS);
      expect(due).toMatchObject([{ id: soon?.id, attempts: 1 }]);
      await store().webhooks.recordAttempt(due[0] as ClaimedDelivery, {
        outcome: 'failed',
        error: 'Connection refused.',
      });
      const failed = ((await store().webhooks.listDeliveries(endpoint.id, 10)) ?? []).find(
        (delivery) => delivery.id === soon?.id,
      );
      expect(failed).toMatchObject({ status: 'failed', attempts: 2, lastError: 'Connection refused.' });
      expect(failed).not.toHaveProperty('lastStatus');
      expect(failed).not.toHaveProperty('nextAttemptAt');
    });

    it('a gone delivery fails; a disabled endpoint shows why, its pending deliveries wait unclaimed, nothing more is announced to it', async () => {
      const gone = await register();
      const other = await register();
      await store().create({ id: 5n, name: 'One' });
      await store().create({ id: 6n, name: 'Two' });
      // The other endpoint has no room: only the gone one's first is claimed.
      const [goneClaim] = await claim(1, 60_000, 1, new Map([[other.id, 0]]));
      expect(goneClaim?.endpointId).toBe(gone.id);
      expect(
        await store().webhooks.recordAttempt(goneClaim as ClaimedDelivery, {
          outcome: 'gone',
          status: 410,
          error: 'The receiver answered 410 Gone.',
        }),
      ).toBe(true);
      expect(await store().webhooks.disableEndpoint(gone.id, 'The receiver answered 410 Gone.')).toBe(true);
      expect(await store().webhooks.disableEndpoint(gone.id, 'Again.')).toBe(false);
      expect(await store().webhooks.getEndpoint(gone.id)).toMatchObject({
        enabled: false,
        disabledReason: 'The receiver answered 410 Gone.',
      });
      expect(await store().webhooks.getEndpoint(other.id)).not.toHaveProperty('disabledReason');
      const deliveries = (await store().webhooks.listDeliveries(gone.id, 10)) ?? [];
      expect(deliveries.map((delivery) => [delivery.plantId, delivery.status])).toStrictEqual([
        [6n, 'pending'],
        [5n, 'failed'],
      ]);
      await store().create({ id: 7n, name: 'Three' });
      expect(await store().webhooks.listDeliveries(gone.id, 10)).toHaveLength(2);
      expect((await store().webhooks.listDeliveries(other.id, 10))?.map((delivery) => delivery.plantId)).toStrictEqual([
        7n,
        6n,
        5n,
      ]);
      // Only the other endpoint's deliveries are claimed, and counted as pending.
      const claimed = await claim(10, 60_000);
      expect(claimed.map((delivery) => delivery.endpointId)).toStrictEqual([other.id, other.id, other.id]);
      expect((await store().webhooks.backlog()).pending).toBe(3);
    });

    it('disables an endpoint for failing only once every attempt has failed since the time given', async () => {
      const endpoint = await register();
      for (const id of [50n, 51n, 52n]) await store().create({ id, name: `Plant ${id}` });
      const [first, second, third] = await claim(3, 60_000);
      const beforeFailing = new Date(Date.now() - 1);
      await sleep(5);
      await store().webhooks.recordAttempt(first as ClaimedDelivery, {
        outcome: 'retry',
        retryInMs: 60_000,
        error: 'x',
      });
      const reason = 'Every delivery failed for 5 days.';
      // Failing since just now, not since before that.
      expect(await store().webhooks.disableEndpoint(endpoint.id, reason, beforeFailing)).toBe(false);
      await sleep(5);
      // A delivered attempt ends the streak; the next failure starts a new one.
      await store().webhooks.recordAttempt(second as ClaimedDelivery, { outcome: 'delivered', status: 200 });
      expect(await store().webhooks.disableEndpoint(endpoint.id, reason, new Date())).toBe(false);
      await store().webhooks.recordAttempt(third as ClaimedDelivery, { outcome: 'failed', error: 'y' });
      await sleep(5);
      expect(await store().webhooks.disableEndpoint(endpoint.id, reason, new Date())).toBe(true);
      expect(await store().webhooks.getEndpoint(endpoint.id)).toMatchObject({ enabled: false, disabledReason: reason });
    });

    it("ends an endpoint's failing streak when one of a batch's attempts to it was delivered, whatever their order", async () => {
      const mixed = await register();
      const failing = await register();
      for (const id of [53n, 54n]) await store().create({ id, name: `Plant ${id}` });
      const claimed = await claim(4, 60_000);
      const of = (endpoint: StoredEndpoint) => claimed.filter((delivery) => delivery.endpointId === endpoint.id);
      const [mixedFirst, mixedSecond] = of(mixed) as [ClaimedDelivery, ClaimedDelivery];
      const [failingFirst, failingSecond] = of(failing) as [ClaimedDelivery, ClaimedDelivery];
      const retry = { outcome: 'retry', retryInMs: 60_000, error: 'No.' } as const;
      const beforeFailing = new Date(Date.now() - 1);
      await sleep(5);
      expect(
        await store().webhooks.recordAttempts([
          { claim: mixedFirst, result: { outcome: 'delivered', status: 204 } },
          { claim: failingFirst, result: retry },
          { claim: mixedSecond, result: retry },
          { claim: failingSecond, result: retry },
        ]),
      ).toStrictEqual([true, true, true, true]);
      await sleep(5);
      const reason = 'Every delivery failed for 5 days.';
      expect(await store().webhooks.disableEndpoint(mixed.id, reason, new Date())).toBe(false);
      // Failing since this batch, not before it.
      expect(await store().webhooks.disableEndpoint(failing.id, reason, beforeFailing)).toBe(false);
      expect(await store().webhooks.disableEndpoint(failing.id, reason, new Date())).toBe(true);
    });

    it('drops the deliveries of a deleted endpoint and lists with a limit, newest first', async () => {
      const endpoint = await register();
      for (const id of [10n, 11n, 12n]) await store().create({ id, name: `Plant ${id}` });
      expect(
        (await store().webhooks.listDeliveries(endpoint.id, 2))?.map((delivery) => delivery.plantId),
      ).toStrictEqual([12n, 11n]);
      expect(await store().webhooks.deleteEndpoint(endpoint.id)).toBe(true);
      expect(await store().webhooks.backlog()).toStrictEqual({ pending: 0, oldestPendingAt: undefined });
      expect(await claim(10, 60_000)).toStrictEqual([]);
    });

    it('takes turns across endpoints, each within its room (listed, else the per-endpoint limit)', async () => {
      const a = await register();
      const b = await register();
      for (let id = 30n; id < 36n; id++) await store().create({ id, name: `Plant ${id}` });
      const endpointsOf = (claimed: ClaimedDelivery[]) => claimed.map((delivery) => delivery.endpointId).sort();

      // Every endpoint's first before any endpoint's second.
      const first = await claim(4, 60_000, 10);
      expect(endpointsOf(first)).toStrictEqual([a.id, a.id, b.id, b.id].sort());
      // a has no room left, b room for 2: only b's remain to claim, 2 of them.
      const second = await claim(
        10,
        60_000,
        3,
        new Map([
          [a.id, 0],
          [b.id, 2],
        ]),
      );
      expect(endpointsOf(second)).toStrictEqual([b.id, b.id]);
      for (const delivery of second) expect(first.map((claimed) => claimed.id)).not.toContain(delivery.id);
      const third = await claim(10, 60_000, 10);
      expect(endpointsOf(third)).toStrictEqual([a.id, a.id, a.id, a.id, b.id, b.id].sort());
      expect(await claim(10, 60_000, 10)).toStrictEqual([]);
    });

    describe('rate limits', () => {
      /** Claims of every endpoint, counted by endpoint, and what the claim reported of rate-limited ones. */
      const claimCounting = async () => {
        const reported: number[] = [];
        const claimed = await store().webhooks.claimDue({
          limit: 100,
          leaseMs: HELD_MS,
          perEndpoint: 100,
          room: new Map(),
          onRateLimited: (roomInMs) => reported.push(roomInMs),
        });
        const counts = new Map<string, number>();
        for (const { endpointId } of claimed) counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1);
        return { counts, reported };
      };

      // The stores keep time (PostgreSQL's now()): the bounds hold however slow the machine, since
      // the span measured here contains every claim.
      it('holds an endpoint to a burst of one second of its rate, then the rate; others are not held', async () => {
        const limited = await register(newEndpoint({ rateLimit: 3 }));
        expect(limited.rateLimit).toBe(3);
        expect(await store().webhooks.getEndpoint(limited.id)).toStrictEqual(limited);
        const free = await register();
        for (let id = 60n; id < 72n; id++) await store().create({ id, name: `Plant ${id}` });
        const started = Date.now();
        const first = await claimCounting();
        // A burst of one second's worth, and every due delivery of the endpoint without a limit.
        expect(first.counts.get(limited.id)).toBe(3);
        expect(first.counts.get(free.id)).toBe(12);
        // Room for the next delivery (a tenth of a second's worth, at least one) within a third of a second.
        expect(first.reported).toHaveLength(1);
        expect(first.reported[0]).toBeGreaterThan(0);
        expect(first.reported[0]).toBeLessThanOrEqual(1000 / 3);
        let total = 3;
        for (let round = 0; round < 5; round++) total += (await claimCounting()).counts.get(limited.id) ?? 0;
        const seconds = (Date.now() - started) / 1000;
        expect(total).toBeLessThanOrEqual(3 + 3 * seconds);
      });

      it('applies a changed limit at the next claim, and none once it is removed with null', async () => {
        const endpoint = await register(newEndpoint({ rateLimit: 2 }));
        for (let id = 80n; id < 90n; id++) await store().create({ id, name: `Plant ${id}` });
        expect((await claimCounting()).counts.get(endpoint.id)).toBe(2);
        expect(await store().webhooks.updateEndpoint(endpoint.id, { rateLimit: 4 })).toStrictEqual({
          outcome: 'updated',
          endpoint: { ...endpoint, rateLimit: 4 },
        });
        // The 2 sent count at the new rate: half the burst is spent, the other half goes at once.
        const second = (await claimCounting()).counts.get(endpoint.id) ?? 0;
        expect(second).toBeGreaterThanOrEqual(2);
        const { rateLimit: _removed, ...unlimited } = endpoint;
        expect(await store().webhooks.updateEndpoint(endpoint.id, { rateLimit: null })).toStrictEqual({
          outcome: 'updated',
          endpoint: unlimited,
        });
        expect(await claimCounting()).toStrictEqual({
          counts: new Map([[endpoint.id, 10 - 2 - second]]),
          reported: [],
        });
        expect(await claimCounting()).toStrictEqual({ counts: new Map(), reported: [] });
      });
    });

    it('deletes deliveries finished before a time, delivered or failed, in batches; pending ones stay', async () => {
      const endpoint = await register();
      for (let id = 40n; id < 44n; id++) await store().create({ id, name: `Plant ${id}` });
      const [delivered, failed, retried] = await claim(3, 60_000);
      await store().webhooks.recordAttempt(delivered as ClaimedDelivery, { outcome: 'delivered', status: 200 });
      await store().webhooks.recordAttempt(failed as ClaimedDelivery, { outcome: 'failed', error: 'Gone for good.' });
      await store().webhooks.recordAttempt(retried as ClaimedDelivery, {
        outcome: 'retry',
        retryInMs: 60_000,
        error: 'Later.',
      });
      // Finished before an hour ago: none.
      expect(await store().webhooks.pruneFinished(new Date(Date.now() - 3_600_000), 10)).toBe(0);
      await sleep(5);
      const now = new Date();
      expect(await store().webhooks.pruneFinished(now, 1)).toBe(1);
      expect(await store().webhooks.pruneFinished(now, 10)).toBe(1);
      expect(await store().webhooks.pruneFinished(now, 10)).toBe(0);
      const left = (await store().webhooks.listDeliveries(endpoint.id, 10)) ?? [];
      expect(left.map((delivery) => delivery.status)).toStrictEqual(['pending', 'pending']);
      expect(left.map((delivery) => delivery.id).sort()).toStrictEqual(
        [retried?.id, (await claim(1, 60_000))[0]?.id].sort(),
      );
    });

    it('records many attempts in one operation, each only while its lease holds', async () => {
      const endpoint = await register();
      for (const id of [60n, 61n, 62n]) await store().create({ id, name: `Plant ${id}` });
      const [delivered, retried, lost] = await claim(3, 60_000);
      const stale = { ...(lost as ClaimedDelivery), leaseToken: 'not-the-lease' };
      expect(
        await store().webhooks.recordAttempts([
          { claim: delivered as ClaimedDelivery, result: { outcome: 'delivered', status: 204 } },
          {
            claim: retried as ClaimedDelivery,
            result: { outcome: 'retry', retryInMs: 60_000, status: 500, error: 'No.' },
          },
          { claim: stale, result: { outcome: 'delivered', status: 200 } },
        ]),
      ).toStrictEqual([true, true, false]);
      const byId = new Map(((await store().webhooks.listDeliveries(endpoint.id, 10)) ?? []).map((d) => [d.id, d]));
      expect(byId.get(delivered?.id as string)).toMatchObject({ status: 'delivered', lastStatus: 204, attempts: 1 });
      expect(byId.get(retried?.id as string)).toMatchObject({ status: 'pending', lastStatus: 500, attempts: 1 });
      expect(byId.get(lost?.id as string)).toMatchObject({ status: 'pending', attempts: 0 });
      expect(await store().webhooks.recordAttempts([])).toStrictEqual([]);
    });

    it('announces every one of many plants created at once', async () => {
      const endpoint = await register();
      const ids = Array.from({ length: 100 }, (_, index) => BigInt(1000 + index));
      await Promise.all(ids.map((id) => store().create({ id, name: `Plant ${id}` })));
      // The same ids again, at once: all replays, no announcement.
      await Promise.all(ids.map((id) => store().create({ id, name: `Plant ${id}` })));
      const deliveries = (await store().webhooks.listDeliveries(endpoint.id, 1000)) ?? [];
      expect(deliveries.map((delivery) => delivery.plantId).sort((a, b) => (a < b ? -1 : 1))).toStrictEqual(ids);
    });
  });
};
