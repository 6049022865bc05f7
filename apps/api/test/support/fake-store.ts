import type { PlantStore } from '../../src/store/plant-store.ts';
import type { RequestStore } from '../../src/store/request-store.ts';
import type { WebhookStore } from '../../src/store/webhook-store.ts';

/** No endpoints, nothing to deliver. */
const noWebhooks: WebhookStore = {
  createEndpoint: async ({ id, url, owner }) => ({
    outcome: 'created',
    endpoint: {
      id,
      url,
      eventTypes: ['newPlant'],
      payloadFormat: 'plain',
      createdAt: new Date(),
      enabled: true,
      owner,
    },
  }),
  updateEndpoint: async () => ({ outcome: 'not-found' }),
  rotateSecret: async () => false,
  requeueFailed: async () => 0,
  expediteRetries: async () => 0,
  retryDelivery: async () => false,
  endpointSecrets: async () => [],
  signingSecrets: async () => undefined,
  replaceSecret: async () => false,
  listEndpoints: async () => [],
  getEndpoint: async () => undefined,
  deleteEndpoint: async () => false,
  listDeliveries: async () => undefined,
  claimDue: async () => [],
  recordAttempt: async () => false,
  recordAttempts: async (attempts) => attempts.map(() => false),
  disableEndpoint: async () => false,
  backlog: async () => ({ pending: 0, oldestPendingAt: undefined }),
  backlogByEndpoint: async () => [],
  pruneFinished: async () => 0,
  onAnnounce: () => () => {},
};

/** Every key claimed, every test taken, nothing kept. */
const noRequests: RequestStore = {
  claimIdempotencyKey: async () => ({ outcome: 'claimed' }),
  finishIdempotencyKey: async () => {},
  releaseIdempotencyKey: async () => {},
  plainKeptAnswers: async () => [],
  replaceKeptAnswer: async () => false,
  takeWebhookTest: async () => ({ outcome: 'taken' }),
};

/** A store that holds nothing and accepts every create; override what a test needs. */
export const fakeStore = (overrides: Partial<PlantStore> = {}): PlantStore => ({
  create: async (plant) => ({ outcome: 'created', plant }),
  get: async () => undefined,
  list: async () => [],
  delete: async () => false,
  health: async () => {},
  alive: () => true,
  close: async () => {},
  webhooks: noWebhooks,
  requests: noRequests,
  ...overrides,
});
