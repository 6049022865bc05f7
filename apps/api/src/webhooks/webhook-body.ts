import type { ClaimedDelivery } from '../store/webhook-store.ts';

/**
 * What a delivery's body says, before it is serialized: a newPlant announces the plant as stored
 * (the body receivers have always had); a plantDeleted the deleted plant's id and the plant as it was.
 */
export const deliveryBody = ({ type, plant }: ClaimedDelivery): object =>
  type === 'newPlant' ? plant : { id: plant.id, plant };
