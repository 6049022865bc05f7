/**
 * The webhook operations of the embedded store, endpoints and the outbox: what the database thread
 * runs, and how the store decodes it (sqlite-webhook-store.ts submits them; their SQL is in
 * webhook-statements.ts, the claim and the fan-out in webhook-outbox.ts). The thread imports this
 * module: it stays free of the contract and of the store's side.
 */
import type { WebhookEventType, WebhookPayloadFormat } from '@org/plant-contract';
import { rescaledTat } from '../rate-limit.ts';
import type { DeliveryRow, EndpointRow } from '../store-shared.ts';
import {
  FAN_OUT_PER_CLAIMED,
  type RegisteredFields,
  registeredEndpoint,
  toDelivery,
  toEndpoint,
} from '../store-shared.ts';
import {
  type AttemptResult,
  type ClaimedDelivery,
  type CreateEndpointOutcome,
  DISABLED_BY_REQUEST,
  type EndpointBacklog,
  type EndpointSecrets,
  parseDeliveryId,
  type SigningSecrets,
  type UpdateEndpointOutcome,
  type WebhookBacklog,
} from '../webhook-store.ts';
import { operation, type Thread } from './operation.ts';
import { type Claim, claimFairly, fanOut } from './webhook-outbox.ts';

/**
 * A claimed delivery as the thread sends it: an array, not an object. node:sqlite's rows are
 * dictionary objects, slow to serialize, and the structured clone that carries them to the delivery
 * thread rebuilds each object property by property, map transition after map transition.
 */
export type ClaimedRow = [
  id: string,
  seq: bigint,
  endpointId: string,
  url: string,
  secret: string,
  /** JSON: those rotated out whose grace lasts; null when there is none. */
  previousSecrets: string | null,
  plantId: bigint,
  /** The event's data as text (see ClaimedDelivery). */
  data: string,
  attempts: number | bigint,
  createdAt: number | bigint,
  traceparent: string | null,
  type: WebhookEventType,
  payloadFormat: WebhookPayloadFormat,
];

/** An attempt as recordAttempts takes it: the next attempt in Unix ms, for a retry. */
export type AttemptRecord = [
  seq: bigint,
  leaseToken: string,
  outcome: AttemptResult['outcome'],
  status: number | null,
  error: string | null,
  nextAttemptAt: number | null,
  endpointId: string,
];

type SecretsRow = { id: string; secret: string; previous_secrets: string | null };

/** A JSON array of secrets as SQLite's json_group_array writes it. */
const secretList = (json: string): string[] => JSON.parse(json) as string[];

const toClaimed = (
  [
    id,
    seq,
    endpointId,
    url,
    secret,
    previousSecrets,
    plantId,
    data,
    attempts,
    createdAt,
    traceparent,
    type,
    payloadFormat,
  ]: ClaimedRow,
  leaseToken: string,
): ClaimedDelivery => {
  // The optional fields are set last, not spread into the literal: every property after a spread
  // is defined through a slow runtime call, once per delivery.
  const claimed: ClaimedDelivery = {
    id,
    seq,
    endpointId,
    url,
    secret,
    type,
    payloadFormat,
    plantId,
    data,
    attempts: Number(attempts),
    leaseToken,
    createdAt: new Date(Number(createdAt)),
  };
  if (previousSecrets !== null) claimed.previousSecrets = secretList(previousSecrets);
  if (traceparent !== null) claimed.traceparent = traceparent;
  return claimed;
};

/** The writes of the webhook operations that do not change endpoints: outbox or secrets. */
const write = { writes: true, outbox: false, announces: false } as const;
/** The outbox's own work, in its lane (see `DatabaseThread`). */
const outboxWrite = { writes: true, outbox: true, announces: false } as const;
const read = { writes: false, outbox: false, announces: false } as const;
/** The outbox's reads (metrics), in its lane. */
const outboxRead = { writes: false, outbox: true, announces: false } as const;

/** A write that changes endpoints: whether a create announces is read again after its batch. */
const changingEndpoints = (thread: Thread): void => {
  thread.beginWrite();
  thread.endpointsChanged = true;
};

export const webhookOperations = {
  /**
   * → its createdAt (Unix ms, this thread's clock) when registered; 'owner' when its owner has
   * `perOwner` endpoints already, 'total' when all owners have `total`; else `[holder]`, the id of
   * the owner's endpoint that has the URL (the unique index refused it).
   */
  createEndpoint: operation({
    ...write,
    arity: 10,
    run: (
      thread: Thread,
      id: string,
      url: string,
      description: string | null,
      eventTypes: string,
      payloadFormat: WebhookPayloadFormat,
      rateLimit: number | null,
      secret: string,
      owner: string,
      perOwner: number,
      total: number,
    ): number | 'owner' | 'total' | [string] => {
      changingEndpoints(thread);
      const { webhooks, now } = thread;
      // Stamped by the clock that stamps the announcements (see NewStoredEndpoint).
      const values = {
        id,
        url,
        description,
        eventTypes,
        payloadFormat,
        rateLimit,
        secret,
        now,
        owner,
        perOwner,
        total,
      };
      if (webhooks.createEndpoint.run(values).changes === 1) return now;
      const holder = webhooks.urlHolder.get(owner, url) as { id: string } | undefined;
      if (holder !== undefined) return [holder.id];
      return (webhooks.ownedCount.get(owner) as { count: number }).count >= perOwner ? 'owner' : 'total';
    },
    decode: (registered: RegisteredFields, result): CreateEndpointOutcome => {
      if (typeof result === 'number') return registeredEndpoint(registered, new Date(result));
      if (result === 'owner') return { outcome: 'too-many' };
      if (result === 'total') return { outcome: 'too-many-in-all' };
      return { outcome: 'url-taken', holder: result[0] };
    },
  }),
  /**
   * Changes what is not null (`setDescription` 1: the description, null removing it; `setRate` 1:
   * the rate limit at `now`, null removing it) → the endpoint's row; null when there is none; else
   * the id of the endpoint that has the URL.
   */
  updateEndpoint: operation({
    ...write,
    arity: 10,
    run: (
      thread: Thread,
      id: string,
      url: string | null,
      setDescription: number,
      description: string | null,
      enabled: number | null,
      eventTypes: string | null,
      payloadFormat: WebhookPayloadFormat | null,
      setRate: number,
      rateLimit: number | null,
      now: number,
    ): EndpointRow | string | null => {
      changingEndpoints(thread);
      const { webhooks } = thread;
      const rate = webhooks.rateOf.get(id) as { rate_limit: number | null; rate_tat: number | null } | undefined;
      const rateTat = rate === undefined ? null : rescaledTat(now, rate.rate_tat, rate.rate_limit, rateLimit);
      // The events announced before a change of types go out by the types they were announced under.
      let fanning = eventTypes !== null;
      while (fanning) fanning = fanOut(thread, Number.MAX_SAFE_INTEGER);
      const { changes } = webhooks.updateEndpoint.run({
        id,
        url,
        setDescription,
        description,
        enabled,
        eventTypes,
        payloadFormat,
        setRate,
        rateLimit,
        rateTat,
        disabledReason: DISABLED_BY_REQUEST,
      });
      const row = (webhooks.getEndpoint.get(id) as unknown as EndpointRow | undefined) ?? null;
      if (changes === 1 || row === null) return row;
      // OR IGNORE skipped the row: the unique URL index refused it.
      return (webhooks.urlHolder.get(row.owner, url) as { id: string }).id;
    },
    decode: (_: undefined, result): UpdateEndpointOutcome => {
      if (result === null) return { outcome: 'not-found' };
      if (typeof result === 'string') return { outcome: 'url-taken', holder: result };
      return { outcome: 'updated', endpoint: toEndpoint(result) };
    },
  }),
  /**
   * → whether the endpoint exists (its secret is then `secret`; the current one signs too until
   * `now` + `graceMs`, beside those rotated out before whose grace lasts, `most` in all).
   */
  rotateSecret: operation({
    ...write,
    arity: 5,
    run: (thread: Thread, id: string, secret: string, graceMs: number, most: number, now: number): boolean => {
      const { webhooks } = thread;
      const row = webhooks.secretsOf.get(id) as Omit<SecretsRow, 'id'> | undefined;
      if (row === undefined) return false;
      thread.beginWrite();
      const kept = (
        row.previous_secrets === null ? [] : (JSON.parse(row.previous_secrets) as [string, number][])
      ).filter(([, until]) => until > now);
      const previous = JSON.stringify([[row.secret, now + graceMs], ...kept].slice(0, most));
      return webhooks.rotateSecret.run({ id, secret, previous }).changes === 1;
    },
  }),
  /** → how many failed deliveries created at or after `since` are pending again, due now. */
  requeueFailed: operation({
    ...write,
    arity: 4,
    run: (thread: Thread, id: string, since: number, limit: number, now: number): number => {
      thread.beginWrite();
      return Number(thread.webhooks.requeueFailed.run({ id, since, limit, now }).changes);
    },
  }),
  /** → how many of the endpoint's retries are due now (see WebhookStore.expediteRetries). */
  expediteRetries: operation({
    ...write,
    arity: 3,
    run: (thread: Thread, id: string, limit: number, now: number): number => {
      thread.beginWrite();
      return Number(thread.webhooks.expediteRetries.run({ id, limit, now }).changes);
    },
  }),
  /** → whether the delivery exists (it is then pending and due now). */
  retryDelivery: operation({
    ...write,
    arity: 3,
    run: (thread: Thread, id: string, deliveryId: string, now: number): boolean => {
      const { webhooks } = thread;
      const parsed = parseDeliveryId(deliveryId);
      if (parsed === undefined || parsed.instance !== webhooks.instanceOf(parsed.seq)) return false;
      // A delivery id exists only once its event is fanned out: nothing to fan out first.
      thread.beginWrite();
      return webhooks.retryDelivery.run({ id, seq: parsed.seq, now }).changes === 1;
    },
  }),
  /** → every endpoint's secrets as stored. */
  endpointSecrets: operation({
    ...read,
    arity: 0,
    // json_group_array answers [] for an endpoint never rotated: every row has a list.
    run: (thread: Thread): (SecretsRow & { previous_secrets: string })[] =>
      thread.webhooks.endpointSecrets.all() as unknown as (SecretsRow & { previous_secrets: string })[],
    decode: (_: undefined, rows) =>
      rows.map(
        ({ id, secret, previous_secrets }): EndpointSecrets => ({
          id,
          secret,
          previousSecrets: secretList(previous_secrets),
        }),
      ),
  }),
  /** → the endpoint's signing secrets now, or undefined when there is no such endpoint. */
  signingSecrets: operation({
    ...read,
    arity: 2,
    // null, not undefined, for no row: as the other operations answer nothing across the thread.
    run: (thread: Thread, id: string, now: number): Omit<SecretsRow, 'id'> | null =>
      (thread.webhooks.signingSecrets.get({ id, now }) as Omit<SecretsRow, 'id'> | undefined) ?? null,
    decode: (_: undefined, row): SigningSecrets | undefined =>
      row === null
        ? undefined
        : row.previous_secrets === null
          ? { secret: row.secret }
          : { secret: row.secret, previousSecrets: secretList(row.previous_secrets) },
  }),
  /** → whether the stored secret was still `from` (it is then `to`). */
  replaceSecret: operation({
    ...write,
    arity: 4,
    run: (thread: Thread, id: string, which: 'secret' | 'previousSecret', from: string, to: string): boolean => {
      thread.beginWrite();
      const { db, webhooks } = thread;
      const statement = which === 'secret' ? webhooks.replaceSecret : webhooks.replacePreviousSecret;
      // The plain secret being sealed must not linger in the page's free space (secure_delete
      // zeroes it); the next checkpoint (at the latest, closing the store) carries that page into
      // the database file.
      db.exec('PRAGMA secure_delete = ON');
      try {
        return statement.run({ id, from, to }).changes === 1;
      } finally {
        db.exec('PRAGMA secure_delete = OFF');
      }
    },
  }),
  /** → endpoint rows, oldest first. */
  /** → the endpoints of `owner`, or every owner's when null. */
  listEndpoints: operation({
    ...read,
    arity: 1,
    run: (thread: Thread, owner: string | null): EndpointRow[] =>
      (owner === null
        ? thread.webhooks.listEndpoints.all()
        : thread.webhooks.listOwnedEndpoints.all(owner)) as unknown as EndpointRow[],
    decode: (_: undefined, rows) => rows.map(toEndpoint),
  }),
  getEndpoint: operation({
    ...read,
    arity: 1,
    run: (thread: Thread, id: string): EndpointRow | null =>
      (thread.webhooks.getEndpoint.get(id) as unknown as EndpointRow | undefined) ?? null,
    decode: (_: undefined, row) => (row === null ? undefined : toEndpoint(row)),
  }),
  /**
   * → null when there is no such endpoint; else disables it and deletes up to `batch` of its
   * deliveries, then the endpoint once none is left: true when deleted, false to ask again.
   */
  deleteEndpoint: operation({
    ...outboxWrite,
    arity: 2,
    run: (thread: Thread, id: string, batch: number): boolean | null => {
      changingEndpoints(thread);
      const { webhooks } = thread;
      // Disabled first, so that nothing more is fanned out to it while its deliveries go in batches.
      if (webhooks.disableForDeletion.run(id).changes === 0) return null;
      if (Number(webhooks.deleteDeliveries.run(id, batch).changes) === batch) return false;
      webhooks.deleteEndpoint.run(id);
      return true;
    },
  }),
  /** → delivery rows newest first (before the key `before`), or null when there is no such endpoint. */
  listDeliveries: operation({
    ...read,
    arity: 3,
    run: (thread: Thread, id: string, limit: number, before: bigint): DeliveryRow[] | null => {
      const { webhooks } = thread;
      if (webhooks.getEndpoint.get(id) === undefined) return null;
      return webhooks.withIds(
        webhooks.listDeliveries.all(id, before, limit) as { seq: bigint }[],
      ) as unknown as DeliveryRow[];
    },
    decode: (_: undefined, rows) => (rows === null ? undefined : rows.map(toDelivery)),
  }),
  /**
   * → claimed delivery rows, and in how many ms a rate-limited endpoint left short of room has room
   * again (or null); `room` holds [endpoint id, most to claim of it] pairs, `perEndpoint` is for the others.
   */
  claimDue: operation({
    ...outboxWrite,
    arity: 6,
    run: (thread: Thread, ...claim: Claim): [rows: ClaimedRow[], roomInMs: number | null] => {
      const [now, limit] = claim;
      thread.beginWrite();
      // A few times what is claimed, so that fanning out keeps ahead of delivering, and stays small
      // while the thread steps back for requests.
      fanOut(thread, FAN_OUT_PER_CLAIMED * limit);
      const { webhooks } = thread;
      const rows: ClaimedRow[] = [];
      const [chosen, roomInMs] = claimFairly(thread, ...claim);
      for (const { seq } of chosen) {
        const row = webhooks.claimed.get(seq, now) as unknown as ClaimedRow | undefined;
        if (row === undefined) continue;
        // The webhook-id first, as ClaimedRow has it.
        row.unshift(webhooks.webhookId(seq));
        rows.push(row);
      }
      return [rows, roomInMs];
    },
    decode: (
      { token, onRateLimited }: { token: string; onRateLimited: ((roomInMs: number) => void) | undefined },
      [rows, roomInMs],
    ) => {
      if (roomInMs !== null) onRateLimited?.(roomInMs);
      return rows.map((row) => toClaimed(row, token));
    },
  }),
  /**
   * → whether each attempt's lease held, in order. Then each endpoint's failing streak ends if one
   * of its recorded attempts was delivered, else starts: once per endpoint and batch, as on PostgreSQL.
   */
  recordAttempts: operation({
    ...outboxWrite,
    arity: 2,
    run: (thread: Thread, now: number, records: AttemptRecord[]): boolean[] => {
      thread.beginWrite();
      const { webhooks } = thread;
      const held: boolean[] = [];
      /** Whether any of each endpoint's recorded attempts was delivered. */
      const delivered = new Map<string, boolean>();
      for (const [seq, token, outcome, status, error, next, endpoint] of records) {
        const recorded = webhooks.record.run(seq, token, outcome, status, error, next, now).changes === 1;
        if (recorded) delivered.set(endpoint, outcome === 'delivered' || delivered.get(endpoint) === true);
        held.push(recorded);
      }
      for (const [endpoint, any] of delivered) {
        if (any) webhooks.streakEnds.run(endpoint);
        else webhooks.streakStarts.run(now, endpoint);
      }
      return held;
    },
  }),
  /** → [pending count, oldest created_at (ms) | null]. */
  backlog: operation({
    ...outboxRead,
    arity: 0,
    run: ({ webhooks }: Thread): [pending: number, oldest: number | null] => {
      type Backlog = { pending: number | bigint; oldest: number | bigint | null };
      const deliveries = webhooks.backlog.get() as Backlog;
      const events = webhooks.eventBacklog.get() as Backlog;
      const oldest = [deliveries.oldest, Number(events.pending) > 0 ? events.oldest : null]
        .filter((value) => value !== null)
        .map(Number);
      return [Number(deliveries.pending) + Number(events.pending), oldest.length === 0 ? null : Math.min(...oldest)];
    },
    decode: (_: undefined, [pending, oldest]): WebhookBacklog => ({
      pending,
      oldestPendingAt: oldest === null ? undefined : new Date(oldest),
    }),
  }),
  /** → [endpoint id, oldest pending created_at (ms), …], the oldest first, at most `limit` endpoints. */
  backlogByEndpoint: operation({
    ...outboxRead,
    arity: 1,
    run: ({ webhooks }: Thread, limit: number): (string | number)[] =>
      (webhooks.backlogByEndpoint.all(limit) as { id: string; oldest: number | bigint }[]).flatMap(({ id, oldest }) => [
        id,
        Number(oldest),
      ]),
    decode: (_: undefined, flat): EndpointBacklog[] => {
      const lag: EndpointBacklog[] = [];
      for (let index = 0; index < flat.length; index += 2)
        lag.push({ endpointId: flat[index] as string, oldestPendingAt: new Date(flat[index + 1] as number) });
      return lag;
    },
  }),
  /** → how many finished deliveries were deleted. */
  pruneFinished: operation({
    ...outboxWrite,
    arity: 2,
    run: (thread: Thread, before: number, limit: number): number => {
      thread.beginWrite();
      return Number(thread.webhooks.pruneFinished.run(before, limit).changes);
    },
  }),
  /**
   * Fans out a bounded batch of events up to `last` (null: the newest) → null once none up to it
   * is left, else the seq to ask again with.
   */
  fanOut: operation({
    ...outboxWrite,
    arity: 1,
    run: (thread: Thread, upTo: bigint | null): bigint | null => {
      const { webhooks } = thread;
      const last = upTo ?? (webhooks.lastEvent.get() as { seq: bigint | null }).seq;
      if (last === null) return null;
      fanOut(thread, Number.MAX_SAFE_INTEGER, last);
      return webhooks.eventUpTo.get(last) === undefined ? null : last;
    },
  }),
  /** → whether the endpoint was disabled now. */
  disableEndpoint: operation({
    ...outboxWrite,
    arity: 3,
    run: (thread: Thread, id: string, reason: string, since: number | null): boolean => {
      changingEndpoints(thread);
      return thread.webhooks.disable.run({ id, reason, since }).changes === 1;
    },
  }),
};
