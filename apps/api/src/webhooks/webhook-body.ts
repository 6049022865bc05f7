import type { ClaimedDelivery } from '../store/webhook-store.ts';

/**
 * What a delivery's body says, before it is serialized. Its data: for a newPlant the plant as
 * stored (the body receivers have always had), for a plantDeleted the deleted plant's id and the
 * plant as it was. An endpoint that asked for the `standard` format gets the data inside Standard
 * Webhooks' `{ type, timestamp, data }`, timestamped when the event was announced.
 */
export const deliveryBody = ({ type, payloadFormat, plant, createdAt }: ClaimedDelivery): object => {
  const data = type === 'newPlant' ? plant : { id: plant.id, plant };
  return payloadFormat === 'plain' ? data : { type, timestamp: createdAt.toISOString(), data };
};
