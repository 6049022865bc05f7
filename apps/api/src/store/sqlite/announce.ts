/**
 * How a plant operation announces an event in its own transaction: one statement for every type,
 * written only while an enabled endpoint receives the type (Thread.receiving), with the event's
 * data as text made from the plant's (the contract's WEBHOOK_EVENT_DATA_JSON).
 */
import type { WebhookEventType } from '@org/plant-contract';
import { WEBHOOK_EVENT_DATA_JSON } from '@org/plant-contract/json-text';
import type { Thread } from './operation.ts';

/** Writes the event of `type` about the plant `id` (`json`, its plantJson) when an endpoint receives it → whether it did. */
export const announce = (
  thread: Thread,
  type: WebhookEventType,
  id: bigint,
  json: string,
  traceparent: string | null,
): boolean => {
  if (!thread.receiving.has(type)) return false;
  thread.webhooks.announce.run(type, id, WEBHOOK_EVENT_DATA_JSON[type](json, id), thread.now, traceparent);
  return true;
};
