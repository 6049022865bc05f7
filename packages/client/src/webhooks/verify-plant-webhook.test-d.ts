import type { WebhookEventType } from '@org/plant-contract';
import { expectTypeOf, it } from 'vitest';
import type { PlantWebhookEvent } from './verify-plant-webhook.ts';

it('types an event for every type of the contract, and none other', () => {
  // A type added to the contract's catalogue fails here until PlantWebhookEvent (and the exhaustive
  // switch that builds it) handles it.
  expectTypeOf<PlantWebhookEvent['type']>().toEqualTypeOf<WebhookEventType>();
});
