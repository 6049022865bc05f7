import { randomBytes } from 'node:crypto';
import {
  WEBHOOK_EVENT_TYPE_HEADER,
  WEBHOOK_TEST_ID_PREFIX,
  type WebhookEventType,
  type WebhookTestResult,
  webhookTestJson,
  webhookTestOutcome,
} from '@org/plant-contract';
import type { SigningSecrets, StoredEndpoint } from '../../store/webhook-store.ts';
import { createAgents, postWebhook } from '../delivery/post-webhook.ts';
import { plainSecrets, type SecretBox } from '../secrets/secret-box.ts';
import { secretKey, signedHeaders } from '../secrets/signature.ts';
import { createHostResolver, type HostResolver } from '../targets/host-resolver.ts';

/**
 * Test deliveries in flight at once in one process, at most: each holds a socket until its
 * receiver answers or the timeout, so a flood of tests to receivers that hang holds no more.
 */
export const WEBHOOK_TESTS_IN_FLIGHT = 32;

/**
 * Test deliveries in flight at once for one principal, at most: a team whose receivers hang holds
 * this many of the process's slots, and leaves the others to everyone else.
 */
export const WEBHOOK_TESTS_IN_FLIGHT_PER_PRINCIPAL = 4;

export type WebhookTesterOptions = {
  /** PLANT_WEBHOOK_TIMEOUT_MS: as long as a real attempt may take. */
  timeoutMs: number;
  /** PLANT_WEBHOOKS_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Looks receivers' hosts up; by default a host resolver of its own. */
  resolver?: HostResolver;
  /** Opens the stored signing secrets; by default they are stored in plain text. */
  secrets?: SecretBox;
  /** Tests in flight at most; default WEBHOOK_TESTS_IN_FLIGHT. */
  maxInFlight?: number;
  /** Tests in flight at most per principal; default WEBHOOK_TESTS_IN_FLIGHT_PER_PRINCIPAL. */
  maxInFlightPerPrincipal?: number;
};

/** Whether a test may start now: its release, or how long to wait and why not. */
export type TestAdmission =
  | { outcome: 'admitted'; release: () => void }
  /** The principal has its most tests in flight. */
  | { outcome: 'principal-busy'; retryAfterSeconds: number; most: number }
  /** The process has its most tests in flight. */
  | { outcome: 'busy'; retryAfterSeconds: number };

export type WebhookTester = {
  /**
   * Takes a slot in flight for `principal` (see `clientKey`), or says why not; `release` gives it
   * back. How many tests an endpoint may have a minute is the store's to say (RequestStore).
   */
  admit(principal: string): TestAdmission;
  /** Sends one signed test event of `type` to the endpoint and answers what came of it. */
  send(endpoint: StoredEndpoint, stored: SigningSecrets, type: WebhookEventType): Promise<WebhookTestResult>;
  /** Cuts off the tests in flight and closes their connections: at shutdown. */
  close(): void;
};

/**
 * Test deliveries (POST /webhooks/{id}/test): one signed event now, outside the outbox and its
 * retries, through the address guard, host resolver and timeout of real deliveries but on agents
 * of its own, since the process that answers requests may not deliver (PLANT_WEBHOOK_DELIVERY=false).
 * Bounded in flight per principal and per process; the limit per endpoint (a receiver is not a
 * target to flood through the service) is kept in the store, across replicas.
 */
export const createWebhookTester = ({
  timeoutMs,
  allowPrivate,
  resolver = createHostResolver(),
  secrets = plainSecrets,
  maxInFlight = WEBHOOK_TESTS_IN_FLIGHT,
  maxInFlightPerPrincipal = WEBHOOK_TESTS_IN_FLIGHT_PER_PRINCIPAL,
}: WebhookTesterOptions): WebhookTester => {
  const agents = createAgents({ allowPrivate, maxSockets: maxInFlight, resolver });
  // A slot frees once a test ends, at the latest after the timeout.
  const busyRetryAfter = Math.max(1, Math.ceil(timeoutMs / 1000));
  let inFlight = 0;
  /** Tests in flight per principal; a principal with none has no entry. */
  const byPrincipal = new Map<string, number>();

  return {
    admit(principal) {
      const own = byPrincipal.get(principal) ?? 0;
      if (own >= maxInFlightPerPrincipal) {
        return { outcome: 'principal-busy', retryAfterSeconds: busyRetryAfter, most: maxInFlightPerPrincipal };
      }
      if (inFlight >= maxInFlight) return { outcome: 'busy', retryAfterSeconds: busyRetryAfter };
      inFlight += 1;
      byPrincipal.set(principal, own + 1);
      let released = false;
      return {
        outcome: 'admitted',
        release: () => {
          if (released) return;
          released = true;
          inFlight -= 1;
          const left = (byPrincipal.get(principal) ?? 1) - 1;
          if (left > 0) byPrincipal.set(principal, left);
          else byPrincipal.delete(principal);
        },
      };
    },

    async send(endpoint, stored, type) {
      const webhookId = `${WEBHOOK_TEST_ID_PREFIX}${randomBytes(16).toString('hex')}`;
      const now = new Date();
      const body = webhookTestJson(type, endpoint.payloadFormat, now);
      const keys = [stored.secret, ...(stored.previousSecrets ?? [])].map((secret) =>
        secretKey(secrets.open(endpoint.id, secret)),
      );
      const headers = {
        ...signedHeaders(keys, webhookId, Math.floor(now.getTime() / 1000), body),
        [WEBHOOK_EVENT_TYPE_HEADER]: type,
      };
      const started = performance.now();
      const outcome = await postWebhook(endpoint.url, body, headers, { timeoutMs, allowPrivate, agents });
      const durationMs = Math.round(performance.now() - started);
      const { delivered, status, error } = webhookTestOutcome(outcome);
      return {
        webhookId,
        eventType: type,
        delivered,
        ...(status !== undefined && { status }),
        durationMs,
        ...(error !== undefined && { error }),
      };
    },

    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
};
