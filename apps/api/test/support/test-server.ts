import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlantStoreFake, SignedDelivery } from '@org/plant-client/testing';
import type { WebhookTestAnswer } from '@org/plant-contract';
import { type AppOptions, createApp } from '../../src/app.ts';
import { type Authenticator, staticTokens } from '../../src/auth/authenticator.ts';
import { hashToken } from '../../src/auth/token-hash.ts';
import type { Clock } from '../../src/clock.ts';
import { answerClientErrors } from '../../src/http/client-errors.ts';
import type { PlantStore } from '../../src/store/plant-store.ts';
import { SqlitePlantStore } from '../../src/store/sqlite/sqlite-store.ts';
import { fakeStoreView, serveFake } from './fake-server.ts';
import type { TestDatabase } from './postgres-server.ts';

export const TEST_TOKEN = 'test-token-0123456789abcdef';
/** A token with scopes, as a JWT has them (the fake's `{ token, scopes }`): for the answers of a missing scope. */
export const SCOPED_TEST_TOKEN = 'test-token-scoped-0123456789';
export const SCOPED_TEST_TOKEN_SCOPES = ['plants:write', 'webhooks:read'] as const;
/**
 * Two teams' tokens, each a principal of its own with every route's scope on its own resources,
 * team A's in two (a rotation: the old and the new token), and an administrator's (webhooks:admin).
 */
export const TEAM_A_TOKEN = 'test-token-team-a-0123456789';
export const TEAM_A_NEW_TOKEN = 'test-token-team-a-rotated-0123';
export const TEAM_B_TOKEN = 'test-token-team-b-0123456789';
export const ADMIN_TEST_TOKEN = 'test-token-admin-0123456789';
/** The owner the service names each principal by (the fake is told the same). */
export const TEAM_A = 'token:team-a';
export const TEAM_B = 'token:team-b';
const TEAM_SCOPES = ['plants:write', 'webhooks:write'] as const;
const ADMIN_SCOPES = ['plants:read', 'webhooks:admin'] as const;

export type TestServer = {
  url: string;
  dataDir: string;
  store: PlantStore;
  /** In the `api-fake` project: the fake that answers in place of the app. */
  fake?: PlantStoreFake;
  /** Stops the server and closes the store; the data directory is kept until `cleanup`. */
  stop(): Promise<void>;
  /** Stops everything and removes the data directory. */
  cleanup(): Promise<void>;
};

export const makeDataDir = (): string => mkdtempSync(join(tmpdir(), 'plant-api-test-'));

/** What a test may set on the app besides its store and TEST_TOKEN. */
export type TestAppOptions = Omit<AppOptions, 'store' | 'authenticate'>;

/**
 * The HTTP suites run on SQLite, again on PostgreSQL in the `api-postgres` vitest project
 * (vitest.config.ts), which sets PLANT_TEST_STORE=postgres, and against @org/plant-client/testing's
 * fake in the `api-fake` project (PLANT_TEST_STORE=fake), which proves the fake answers as the
 * service does.
 */
const ON_POSTGRES = process.env.PLANT_TEST_STORE === 'postgres';
export const ON_FAKE = process.env.PLANT_TEST_STORE === 'fake';
/** On PostgreSQL, one database per data directory: a restart on the same directory finds its plants. */
const databases = new Map<string, TestDatabase>();

const openStore = async (dataDir: string, clock?: Clock): Promise<{ store: PlantStore; drop(): Promise<void> }> => {
  if (!ON_POSTGRES) return { store: await SqlitePlantStore.open(dataDir, { clock }), drop: async () => {} };
  // PostgreSQL keeps its own time (now() in SQL).
  if (clock) throw new Error('A clock of its own needs the embedded store.');
  // Loaded only here: pg, and vitest's inject, which a script importing this module lacks.
  const [{ freshDatabase }, { PostgresPlantStore }] = await Promise.all([
    import('./postgres-test-database.ts'),
    import('../../src/store/postgres/postgres-store.ts'),
  ]);
  let database = databases.get(dataDir);
  if (!database) {
    database = await freshDatabase('plant_http');
    databases.set(dataDir, database);
  }
  const { url, drop } = database;
  return {
    store: await PostgresPlantStore.open({ url, poolSize: 5 }),
    drop: async () => {
      databases.delete(dataDir);
      await drop();
    },
  };
};

/** TEST_TOKEN, the operator's; the others named, with their scopes. */
const testTokens: Authenticator = staticTokens([
  { hash: hashToken(TEST_TOKEN) },
  { hash: hashToken(SCOPED_TEST_TOKEN), principal: { name: 'scoped', scopes: SCOPED_TEST_TOKEN_SCOPES } },
  { hash: hashToken(TEAM_A_TOKEN), principal: { name: 'team-a', scopes: TEAM_SCOPES } },
  { hash: hashToken(TEAM_A_NEW_TOKEN), principal: { name: 'team-a', scopes: TEAM_SCOPES } },
  { hash: hashToken(TEAM_B_TOKEN), principal: { name: 'team-b', scopes: TEAM_SCOPES } },
  { hash: hashToken(ADMIN_TEST_TOKEN), principal: { name: 'admin', scopes: ADMIN_SCOPES } },
]);

/** Closes `server` and its connections, then runs `after`; a second call does nothing. */
const stopOnce = (server: Server, after: () => Promise<void> = async () => {}) => {
  let stopped = false;
  return async () => {
    if (stopped) return;
    stopped = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await after();
  };
};

/** A test delivery of the fake POSTed to the suites' receivers, as the service would send it. */
const postTestDelivery = async ({ url, method, headers, body }: SignedDelivery): Promise<WebhookTestAnswer> => {
  try {
    const response = await fetch(url, { method, headers, body, redirect: 'manual' });
    await response.arrayBuffer();
    return { status: response.status };
  } catch (error) {
    const { code } = (error as { cause?: { code?: string } }).cause ?? {};
    return { error: `Connection failed: ${code ?? 'unknown'}.` };
  }
};

/** The fake instead of the app, with the options it models; a restart on the same directory starts empty. */
const startFakeServer = async (dataDir: string, options: TestAppOptions): Promise<TestServer> => {
  const { createPlantStoreFake } = await import('@org/plant-client/testing');
  const fake = createPlantStoreFake({
    tokens: [
      TEST_TOKEN,
      { token: SCOPED_TEST_TOKEN, scopes: SCOPED_TEST_TOKEN_SCOPES, principal: 'token:scoped' },
      { token: TEAM_A_TOKEN, scopes: TEAM_SCOPES, principal: TEAM_A },
      { token: TEAM_A_NEW_TOKEN, scopes: TEAM_SCOPES, principal: TEAM_A },
      { token: TEAM_B_TOKEN, scopes: TEAM_SCOPES, principal: TEAM_B },
      { token: ADMIN_TEST_TOKEN, scopes: ADMIN_SCOPES, principal: 'token:admin' },
    ],
    ...(options.bodyLimit !== undefined && { bodyLimit: options.bodyLimit }),
    ...(options.allowPrivateWebhooks !== undefined && { allowPrivateWebhooks: options.allowPrivateWebhooks }),
    ...(options.webhookRotationGraceMs !== undefined && { rotationGraceMs: options.webhookRotationGraceMs }),
    ...(options.webhookEndpointsMax !== undefined && { webhookEndpointsMax: options.webhookEndpointsMax }),
    sendTestDelivery: postTestDelivery,
  });
  const { server, url } = await serveFake(fake);
  const stop = stopOnce(server);
  return {
    url,
    dataDir,
    store: fakeStoreView(fake),
    fake,
    stop,
    cleanup: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/**
 * The real app on a real store (SQLite in a temporary directory, or PostgreSQL, see above),
 * listening on 127.0.0.1:<ephemeral>. `storeClock`: the embedded store's clock (see SqlitePlantStore.open).
 */
export const startTestServer = async (
  dataDir = makeDataDir(),
  { storeClock, ...options }: TestAppOptions & { storeClock?: Clock } = {},
): Promise<TestServer> => {
  if (ON_FAKE) return startFakeServer(dataDir, options);
  const { store, drop } = await openStore(dataDir, storeClock);
  const app = createApp({ ...options, store, authenticate: testTokens });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = createServer(app)
      .listen(0, '127.0.0.1', () => resolve(listening))
      .once('error', reject);
  });
  answerClientErrors(server);
  const { port } = server.address() as AddressInfo;
  const stop = stopOnce(server, () => store.close());
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    store,
    stop,
    cleanup: async () => {
      await stop();
      await drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};
