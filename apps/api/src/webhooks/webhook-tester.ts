import { randomBytes } from 'node:crypto';
import {
  stringifyExactJson,
  WEBHOOK_TEST_ID_PREFIX,
  WEBHOOK_TESTS_PER_MINUTE,
  type WebhookEventType,
  type WebhookTestResult,
  webhookTestBody,
  webhookTestOutcome,
} from '@org/plant-contract';
import { RateLimiter } from '../auth/rate-limiter.ts';
import type { SigningSecrets, StoredEndpoint } from '../store/webhook-store.ts';
import { createHostResolver, type HostResolver } from './host-resolver.ts';
import { createAgents, postWebhook } from './post-webhook.ts';
import { plainSecrets, type SecretBox } from './secret-box.ts';
import { secretKey, signedHeaders } from './signature.ts';

/**
 * Test deliveries in flight at once in one process, at most: each holds a socket until its
 * receiver answers or the timeout, so a flood of tests to receivers that hang holds no more.
 */
export const WEBHOOK_TESTS_IN_FLIGHT = 32;

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
  /** Tests per endpoint a minute; default WEBHOOK_TESTS_PER_MINUTE. */
  perMinute?: number;
};

/** Whether a test may start now: its release, or how long to wait and why not. */
export type TestAdmission =
  | { outcome: 'admitted'; release: () => void }
  /** The endpoint had its tests this minute. */
  | { outcome: 'rate-limited'; retryAfterSeconds: number }
  /** The process has WEBHOOK_TESTS_IN_FLIGHT tests in flight. */
  | { outcome: 'busy'; retryAfterSeconds: number };

export type WebhookTester = {
  /** Takes one of the endpoint's tests and a slot in flight, or says why not; `release` gives the slot back. */
  admit(endpointId: string): TestAdmission;
  /** Sends one signed test event of `type` to the endpoint and answers what came of it. */
  send(endpoint: StoredEndpoint, stored: SigningSecrets, type: WebhookEventType): Promise<WebhookTestResult>;
  /** Cuts off the tests in flight and closes their connections: at shutdown. */
  close(): void;
};

/**
 * Test deliveries (POST /webhooks/{id}/test): one signed event now, outside the outbox and its
 * retries, through the address guard, host resolver and timeout of real deliveries but on agents
 * of its own, since the process that answers requests may not deliver (PLANT_WEBHOOK_DELIVERY=false).
 * Limited per endpoint (a receiver is not a target to flood through the service) and bounded in
 * flight per process.
 */
export const createWebhookTester = ({
  timeoutMs,
  allowPrivate,
  resolver = createHostResolver(),
  secrets = plainSecrets,
  maxInFlight = WEBHOOK_TESTS_IN_FLIGHT,
  perMinute = WEBHOOK_TESTS_PER_MINUTE,
}: WebhookTesterOptions): WebhookTester => {
  const agents = createAgents({ allowPrivate, maxSockets: maxInFlight, resolver });
  const perEndpoint = new RateLimiter({ perSecond: perMinute / 60, burst: perMinute });
  // A slot frees once a test ends, at the latest after the timeout.
  const busyRetryAfter = Math.max(1, Math.ceil(timeoutMs / 1000));
  let inFlight = 0;

  return {
    admit(endpointId) {
      // Refused for the process's sake before the endpoint's budget is spent.
      if (inFlight >= maxInFlight) return { outcome: 'busy', retryAfterSeconds: busyRetryAfter };
      const wait = perEndpoint.take(endpointId);
      if (wait > 0) return { outcome: 'rate-limited', retryAfterSeconds: wait };
      inFlight += 1;
      let released = false;
      return {
        outcome: 'admitted',
        release: () => {
          if (released) return;
          released = true;
          inFlight -= 1;
        },
      };
    },

    async send(endpoint, stored, type) {
      const webhookId = `${WEBHOOK_TEST_ID_PREFIX}${randomBytes(16).toString('hex')}`;
      const now = new Date();
      const body = stringifyExactJson(webhookTestBody(type, endpoint.payloadFormat, now));
      const keys = [stored.secret, ...(stored.previousSecrets ?? [])].map((secret) =>
        secretKey(secrets.open(endpoint.id, secret)),
      );
      const headers = signedHeaders(keys, webhookId, Math.floor(now.getTime() / 1000), body);
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
