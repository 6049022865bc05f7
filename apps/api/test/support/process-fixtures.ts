import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { killAllMains, MAIN_TEST_TOKEN } from './main-process.ts';
import type { TestDatabase } from './postgres-server.ts';
import { freshDatabase } from './postgres-test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';
import { listDeliveries as listWithToken, registerEndpoint as registerWithToken } from './webhook-service.ts';

/**
 * What a test of service processes makes for itself, undone after it: the processes are killed,
 * receivers closed, data directories removed and databases dropped.
 */
export const processFixtures = (databasePrefix: string) => {
  const dataDirs: string[] = [];
  const receivers: WebhookReceiver[] = [];
  const databases: TestDatabase[] = [];
  afterEach(async () => {
    await killAllMains();
    for (const receiver of receivers.splice(0)) await receiver.close();
    for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    for (const database of databases.splice(0)) await database.drop();
  });
  afterAll(killAllMains);
  return {
    dataDir: (prefix: string): string => {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dataDirs.push(dir);
      return dir;
    },
    receiver: async (): Promise<WebhookReceiver> => {
      const started = await startWebhookReceiver();
      receivers.push(started);
      return started;
    },
    database: async (): Promise<TestDatabase> => {
      const created = await freshDatabase(databasePrefix);
      databases.push(created);
      return created;
    },
  };
};

/** What webhook tests run processes with: receivers on loopback over plain http, retries 200 ms apart. */
export const WEBHOOK_PROCESS_ENV = {
  PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true',
  PLANT_WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200,200',
  // Not what these tests are about: on a busy machine (pnpm test:stress) the service rightly sheds
  // creates (503) when its event loop falls behind, or when a statement outlasts its 5 s default.
  PLANT_MAX_EVENT_LOOP_DELAY_MS: '0',
  PLANT_DB_STATEMENT_TIMEOUT_MS: '60000',
};

/** The Authorization header of the processes' token. */
export const MAIN_AUTH = { authorization: `Bearer ${MAIN_TEST_TOKEN}` };

/** Registers a webhook endpoint with the process at `base`. */
export const registerEndpoint = (base: string, url: string, fields: { eventTypes?: string[] } = {}) =>
  registerWithToken(base, url, { token: MAIN_TEST_TOKEN, ...fields });

export type ListedDelivery = { id: string; plantId: number | bigint; status: string; attempts: number };

/** An endpoint's deliveries, newest first, as the process at `base` lists them. */
export const listDeliveries = (base: string, endpointId: string) =>
  listWithToken<ListedDelivery>(base, endpointId, { limit: 1000, token: MAIN_TEST_TOKEN });
