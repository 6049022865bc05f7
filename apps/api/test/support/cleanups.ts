import { afterEach } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

export type Defer = (cleanup: () => Promise<void>) => void;

/** Returns `defer`: what it is given runs after each test of the calling file, newest first. */
export const deferCleanups = (): Defer => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return (cleanup) => {
    cleanups.push(cleanup);
  };
};

/** A webhook receiver closed after the test. */
export const deferredReceiver = async (defer: Defer): Promise<WebhookReceiver> => {
  const started = await startWebhookReceiver();
  defer(() => started.close());
  return started;
};
