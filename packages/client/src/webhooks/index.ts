export type { PlantWebhook, PlantWebhookEvent, PlantWebhookFailure, WebhookHeaders } from './verify-plant-webhook.ts';
export {
  PlantWebhookVerificationError,
  verifyPlantWebhook,
  verifyPlantWebhookEvent,
  WEBHOOK_TOLERANCE_SECONDS,
} from './verify-plant-webhook.ts';
