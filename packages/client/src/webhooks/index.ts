export type { PlantWebhook, PlantWebhookFailure, WebhookHeaders } from './verify-plant-webhook.ts';
export {
  PlantWebhookVerificationError,
  verifyPlantWebhook,
  WEBHOOK_TOLERANCE_SECONDS,
} from './verify-plant-webhook.ts';
