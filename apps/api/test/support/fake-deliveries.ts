import { setTimeout as sleep } from 'node:timers/promises';
import type { PlantStoreFake } from '@org/plant-client/testing';

/** How often the fake's recorded deliveries are looked at: the fake announces nothing. */
const POLL_MS = 10;

/**
 * Sends what the fake records, as a receiver team drives it in its own tests: each pending
 * delivery of an enabled endpoint, oldest first, made by `fake.signDelivery`, POSTed to its URL,
 * then settled by the answer (2xx delivered, anything else failed: no retries). So the suites that
 * watch a receiver check the fake's bodies and headers as they check the service's.
 */
export const sendFakeDeliveries = (fake: PlantStoreFake): (() => Promise<void>) => {
  let stopped = false;
  const send = async () => {
    while (!stopped) {
      const enabled = new Set(fake.webhooks.filter((endpoint) => endpoint.enabled).map((endpoint) => endpoint.id));
      const due = fake
        .deliveries()
        .filter((delivery) => delivery.status === 'pending' && enabled.has(delivery.endpointId))
        .reverse();
      for (const delivery of due) {
        if (stopped) return;
        let outcome: 'delivered' | 'failed';
        try {
          const { url, method, headers, body } = await fake.signDelivery(delivery);
          const response = await fetch(url, { method, headers, body, redirect: 'manual' });
          await response.arrayBuffer();
          outcome = response.ok ? 'delivered' : 'failed';
        } catch {
          // The endpoint was deleted meanwhile, or the receiver is gone.
          outcome = 'failed';
        }
        if (fake.deliveries(delivery.endpointId).some(({ id }) => id === delivery.id)) {
          fake.settleDelivery(delivery.id, outcome);
        }
      }
      if (due.length === 0) await sleep(POLL_MS);
    }
  };
  const sending = send();
  return async () => {
    stopped = true;
    await sending;
  };
};
