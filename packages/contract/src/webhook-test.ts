import { z } from 'zod';
import { WEBHOOK_EVENT_DATA_JSON, webhookEventJson } from './json-text.ts';
import { plantJson } from './stored-plant.ts';
import { WebhookEventType, type WebhookPayloadFormat, webhookEventBody } from './webhook-events.ts';

/**
 * The start of every test delivery's webhook-id. A real delivery's is `msg_<16 hex digits>_<digits>`,
 * so a receiver tells a test from a real event by this prefix alone.
 */
export const WEBHOOK_TEST_ID_PREFIX = 'msg_test_';

/** Test deliveries to one endpoint per minute, at most (POST /webhooks/{id}/test; 429 beyond). */
export const WEBHOOK_TESTS_PER_MINUTE = 5;

/** The plant every test delivery carries: id 0 and names that say it is a test. */
export const WEBHOOK_TEST_PLANT = { id: 0, name: 'Plant Store test event', tag: 'webhook-test' } as const;

/**
 * What a test delivery of `type` says, before it is serialized: the example plant as a real
 * delivery of that type would carry it, in the endpoint's format (timestamped `at`).
 */
export const webhookTestBody = (type: WebhookEventType, payloadFormat: WebhookPayloadFormat, at: Date): object =>
  webhookEventBody(type, payloadFormat, { ...WEBHOOK_TEST_PLANT }, at);

/** webhookTestBody as the text sent, built as a real delivery's is (the service's and the fake's). */
export const webhookTestJson = (type: WebhookEventType, payloadFormat: WebhookPayloadFormat, at: Date): string => {
  const id = BigInt(WEBHOOK_TEST_PLANT.id);
  return webhookEventJson(
    type,
    payloadFormat,
    WEBHOOK_EVENT_DATA_JSON[type](plantJson({ ...WEBHOOK_TEST_PLANT, id }), id),
    at,
  );
};

/** The request body of POST /webhooks/{id}/test; it may be left out. */
export const WebhookTestRequest = z.object(
  {
    eventType: WebhookEventType.optional().describe(
      "The event type of the test delivery, any type, subscribed or not; the endpoint's first subscribed type when left out",
    ),
  },
  { invalid_type_error: 'must be a JSON object' },
);
export type WebhookTestRequest = z.infer<typeof WebhookTestRequest>;

/** The answer to POST /webhooks/{id}/test: what happened to the one test delivery. */
export const WebhookTestResult = z.object({
  webhookId: z
    .string()
    .describe(`The webhook-id the test delivery carried: ${WEBHOOK_TEST_ID_PREFIX} and random hex, never a real one`),
  eventType: WebhookEventType,
  delivered: z.boolean().describe('True when the receiver answered 2xx, as a real delivery would count it'),
  status: z.number().int().optional().describe("The receiver's HTTP status; absent when it did not answer (see error)"),
  durationMs: z
    .number()
    .int()
    .min(0)
    .describe('Milliseconds from sending to the answer or the failure, name lookup and connection included'),
  error: z
    .string()
    .optional()
    .describe(
      'Why it was not delivered, as a sentence: the status, a timeout, a refused connection, a refused private address, a failed name lookup',
    ),
});
export type WebhookTestResult = z.infer<typeof WebhookTestResult>;

/** How a receiver took a test delivery: the status it answered, or why nothing came back. */
export type WebhookTestAnswer = { status: number } | { status?: undefined; error: string };

/**
 * What an answer comes to, as a real delivery would count it: delivered for a 2xx; otherwise the
 * reason, as the delivery list words it (a 3xx is an answer: redirects are not followed).
 */
export const webhookTestOutcome = (
  answer: WebhookTestAnswer,
): Pick<WebhookTestResult, 'delivered' | 'status' | 'error'> => {
  const { status } = answer;
  if (status === undefined) return { delivered: false, error: answer.error };
  if (status >= 200 && status < 300) return { delivered: true, status };
  const error =
    status >= 300 && status < 400
      ? `The receiver answered ${status}; redirects are not followed.`
      : `The receiver answered ${status}.`;
  return { delivered: false, status, error };
};

/** The 429 message of POST /webhooks/{id}/test, for the service and its fakes alike. */
export const webhookTestsLimited = (endpointId: string, retryAfterSeconds: number): string =>
  `At most ${WEBHOOK_TESTS_PER_MINUTE} test deliveries a minute may go to the webhook endpoint ${endpointId}; retry after ${retryAfterSeconds} s.`;
