/**
 * The webhook side of the store: subscribed endpoints and the outbox of announcements. Every
 * store writes an announcement per enabled endpoint in the same transaction as the plant it
 * announces (see `PlantStore.create`), so a create acknowledged is a delivery owed, even across
 * a crash. Each backend keeps the outbox in a table of its own: the PostgreSQL job queues
 * (pg-boss, graphile-worker) have no SQLite counterpart and could not join the plant's
 * transaction on the embedded store, and the outbox is small enough to own.
 */

import type { StoredWebhookEndpoint, WebhookEventType, WebhookPayloadFormat } from '@org/plant-contract';

export type StoredEndpoint = StoredWebhookEndpoint;

/**
 * Its createdAt is the store's to stamp, from the clock that stamps the plants' announcements
 * (PostgreSQL's now(), the embedded store's database thread): an endpoint receives the plants
 * created since, and a replica whose clock ran ahead of that one would skip the first of them.
 */
export type NewStoredEndpoint = Omit<
  StoredEndpoint,
  'enabled' | 'disabledReason' | 'createdAt' | 'eventTypes' | 'payloadFormat'
> & {
  /** WEBHOOK_EVENT_TYPES_DEFAULT when not given. */
  eventTypes?: WebhookEventType[];
  /** `plain` when not given. */
  payloadFormat?: WebhookPayloadFormat;
  /**
   * As stored: `whsec_…`, or sealed by PLANT_WEBHOOK_SECRETS_KEY (see secret-box.ts). Kept to sign
   * deliveries, never answered again after registration.
   */
  secret: string;
};

/** The answer to createEndpoint: registered, or why not. */
export type CreateEndpointOutcome =
  | { outcome: 'created'; endpoint: StoredEndpoint }
  /** Its owner has `perOwner` endpoints already. */
  | { outcome: 'too-many' }
  /** All owners together have `total` endpoints already. */
  | { outcome: 'too-many-in-all' }
  /** Another endpoint of the same owner has this URL: one receiver, one endpoint. */
  | { outcome: 'url-taken'; holder: string };

/** The most endpoints an owner, and all owners together, may have. */
export type EndpointCaps = { perOwner: number; total: number };

/** What PATCH /webhooks/{id} may change; `description: null` removes it. */
export type EndpointChanges = {
  url?: string;
  description?: string | null;
  enabled?: boolean;
  /** Applies to the events announced after the change. */
  eventTypes?: WebhookEventType[];
  payloadFormat?: WebhookPayloadFormat;
  /** Deliveries per second at most; null removes the limit. Applies from the next claim. */
  rateLimit?: number | null;
};

export type UpdateEndpointOutcome =
  | { outcome: 'updated'; endpoint: StoredEndpoint }
  | { outcome: 'not-found' }
  | { outcome: 'url-taken'; holder: string };

/** An endpoint's disabledReason once `PATCH { "enabled": false }` disabled it. */
export const DISABLED_BY_REQUEST = 'Disabled by a PATCH request.';

/** An endpoint's signing secrets as stored (plain or sealed), those rotated out included, for sealing plain ones. */
export type EndpointSecrets = { id: string; secret: string; previousSecrets: string[] };

/** The secrets, as stored, that sign an endpoint's deliveries now. */
export type SigningSecrets = {
  secret: string;
  /** Those rotated out whose grace lasts, newest first; absent when there is none. */
  previousSecrets?: string[];
};

/** A delivery's id is `msg_<instance>_<seq>`: the database it belongs to and its key there. */
export const parseDeliveryId = (id: string): { instance: string; seq: bigint } | undefined => {
  const match = /^msg_([0-9a-f]{16})_(\d{1,19})$/.exec(id);
  if (!match?.[1] || !match[2]) return undefined;
  const seq = BigInt(match[2]);
  return seq <= 0x7fffffffffffffffn ? { instance: match[1], seq } : undefined;
};

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export type StoredDelivery = {
  /** The webhook-id of every attempt. */
  id: string;
  endpointId: string;
  /** The event it announces. */
  type: WebhookEventType;
  plantId: bigint;
  status: DeliveryStatus;
  attempts: number;
  lastStatus?: number;
  lastError?: string;
  nextAttemptAt?: Date;
  deliveredAt?: Date;
  createdAt: Date;
};

/** A delivery leased to one delivery loop until `leaseMs` after the claim; what an attempt needs. */
export type ClaimedDelivery = {
  id: string;
  /** The delivery's key in the outbox. */
  seq: bigint;
  endpointId: string;
  url: string;
  /** As stored (see NewStoredEndpoint). */
  secret: string;
  /** The secrets rotated out whose grace lasts, newest first: deliveries are signed with each. */
  previousSecrets?: string[];
  type: WebhookEventType;
  /** The endpoint's, when claimed. */
  payloadFormat: WebhookPayloadFormat;
  /** The id of the plant the event is about. */
  plantId: bigint;
  /**
   * The event's data as JSON text, written once when the event was (WEBHOOK_EVENT_DATA_JSON): every
   * attempt's body is made from it as it is (webhookEventJson).
   */
  data: string;
  /** Attempts made before this one. */
  attempts: number;
  /** Proves the lease when the attempt is recorded: a lease taken over by another delivery loop refuses it. */
  leaseToken: string;
  createdAt: Date;
  /** The W3C traceparent of the create that announced the plant, when it was traced. */
  traceparent?: string;
};

export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  /** Try again `retryInMs` from now. */
  | { outcome: 'retry'; retryInMs: number; status?: number; error: string }
  /** No retry left. */
  | { outcome: 'failed'; status?: number; error: string }
  /** The receiver answered 410 Gone: this delivery fails (the delivery loop then disables the endpoint). */
  | { outcome: 'gone'; status: 410; error: string };

export type RecordedAttempt = { claim: ClaimedDelivery; result: AttemptResult };

export type ClaimOptions = {
  /** At most this many deliveries. */
  limit: number;
  /** How long the claim holds; past it, another delivery loop (of any process) may take the delivery over. */
  leaseMs: number;
  /** At most this many deliveries of an endpoint that `room` does not list. */
  perEndpoint: number;
  /**
   * At most this many deliveries of each endpoint listed (0: none), in place of `perEndpoint`: the
   * claiming loop's room under the endpoint's window, less what it has in flight there.
   */
  room: ReadonlyMap<string, number>;
  /**
   * Called after a claim that left a rate-limited endpoint short of room (see rate-limit.ts), with
   * how long until the earliest such endpoint has room for a batch again: the claiming loop comes
   * back then rather than at its next poll, so that a backlog drains at about the rate.
   */
  onRateLimited?: (roomInMs: number) => void;
};

export type WebhookBacklog = { pending: number; oldestPendingAt: Date | undefined };

/** An enabled endpoint with deliveries pending, and when the oldest of them was announced. */
export type EndpointBacklog = { endpointId: string; oldestPendingAt: Date };

export interface WebhookStore {
  /** Registers the endpoint unless a cap is reached or another endpoint of its owner has its URL. */
  createEndpoint(endpoint: NewStoredEndpoint, caps: EndpointCaps): Promise<CreateEndpointOutcome>;
  /**
   * Changes what is given; a URL another endpoint of its owner has is refused (url-taken), whatever else changes.
   * Disabling keeps the pending deliveries (not claimed while disabled, see `disableEndpoint`);
   * enabling a disabled endpoint clears its disabledReason and failing streak, so they go out again.
   */
  updateEndpoint(id: string, changes: EndpointChanges): Promise<UpdateEndpointOutcome>;
  /**
   * Signs with `secret` from now on, and with the current one too for `graceMs` by the store's
   * clock (the one that compares it), beside those rotated out before whose grace lasts, the newest
   * WEBHOOK_PREVIOUS_SECRETS_MAX of them; false when there is no such endpoint.
   */
  rotateSecret(id: string, secret: string, graceMs: number): Promise<boolean>;
  /**
   * Makes up to `limit` failed deliveries of an enabled endpoint created at or after `since` pending
   * again, due now, oldest first (their webhook-id unchanged); resolves how many.
   */
  requeueFailed(endpointId: string, since: Date, limit: number): Promise<number>;
  /**
   * Makes due now up to `limit` pending deliveries of the endpoint that failed at least twice and
   * wait for a later retry, not leased, the soonest due first; resolves how many. The delivery loop
   * calls it when the endpoint answers again after an outage: what failed during the outage need not
   * wait the longer delays of its schedule. A delivery that failed once waits for its first retry,
   * short by design: it may have failed for a reason of its own a moment ago.
   */
  expediteRetries(endpointId: string, limit: number): Promise<number>;
  /** Makes one delivery of an enabled endpoint pending and due now, whatever its status; false when there is none. */
  retryDelivery(endpointId: string, deliveryId: string): Promise<boolean>;
  /** Every endpoint's secrets as stored. */
  endpointSecrets(): Promise<EndpointSecrets[]>;
  /**
   * The secret that signs the endpoint's deliveries now, with the previous one while its rotation
   * grace lasts, as a claimed delivery has them; undefined when there is no such endpoint.
   */
  signingSecrets(id: string): Promise<SigningSecrets | undefined>;
  /** Replaces a stored secret (the current one, or one rotated out) if it is still `from`; resolves whether it was. */
  replaceSecret(id: string, which: 'secret' | 'previousSecret', from: string, to: string): Promise<boolean>;
  /** The endpoints of `owner` (every owner's when undefined), oldest first. */
  listEndpoints(owner?: string): Promise<StoredEndpoint[]>;
  getEndpoint(id: string): Promise<StoredEndpoint | undefined>;
  /** Removes the endpoint and its deliveries; resolves false when there was none. */
  deleteEndpoint(id: string): Promise<boolean>;
  /**
   * The endpoint's deliveries, newest first, at most `limit`, those announced before the delivery
   * whose key is `before` when given; undefined when the endpoint does not exist.
   */
  listDeliveries(endpointId: string, limit: number, before?: bigint): Promise<StoredDelivery[] | undefined>;
  /**
   * Leases pending deliveries of enabled endpoints that are due and not leased (or whose lease ran
   * out), taking turns across endpoints: each endpoint's oldest due first, then each one's second,
   * and so on, never more than its room (`room`, else `perEndpoint`) nor, for an endpoint with a
   * rate limit, than its limit lets through now, however many loops and processes claim. A lease moves the delivery's next
   * attempt to the lease's end, so leased deliveries cost later claims nothing.
   */
  claimDue(options: ClaimOptions): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt; resolves false when the lease was lost (another delivery loop took the
   * delivery over). The endpoint's failing streak starts at its first attempt that is not delivered and ends
   * at the next delivered one (see `disableEndpoint`).
   */
  recordAttempt(claim: ClaimedDelivery, result: AttemptResult): Promise<boolean>;
  /** recordAttempt for many attempts in one store operation; resolves whether each lease held, in order. */
  recordAttempts(attempts: readonly RecordedAttempt[]): Promise<boolean[]>;
  /**
   * Disables an enabled endpoint with a reason, and resolves whether it did; with `failingSince`,
   * only when every attempt to the endpoint has failed since that time or earlier. Its pending
   * deliveries stay pending, not claimed while it is disabled.
   */
  disableEndpoint(id: string, reason: string, failingSince?: Date): Promise<boolean>;
  /** Deletes up to `limit` deliveries finished (delivered or failed) before `before`; resolves with how many. */
  pruneFinished(before: Date, limit: number): Promise<number>;
  /** Pending deliveries, and when the oldest of them was announced: for metrics. */
  backlog(): Promise<WebhookBacklog>;
  /**
   * The enabled endpoints with deliveries pending (fanned out or still to be), each with when its
   * oldest pending one was announced, the longest waiting first, at most `limit`: for metrics.
   */
  backlogByEndpoint(limit: number): Promise<EndpointBacklog[]>;
  /**
   * Calls `listener` after plants created through this store were announced, so that a delivery
   * loop of this process starts at once instead of at its next poll; returns the unsubscribe.
   */
  onAnnounce(listener: () => void): () => void;
}

/** The listeners of `WebhookStore.onAnnounce`, for the stores to share. */
export class AnnounceListeners {
  readonly #listeners = new Set<() => void>();

  add(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}
