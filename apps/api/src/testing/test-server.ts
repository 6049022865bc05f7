import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AppOptions, createApp } from '../app.ts';
import { staticTokens } from '../auth/authenticator.ts';
import { hashToken } from '../auth/token-hash.ts';
import { answerClientErrors } from '../http/client-errors.ts';
import { SqlitePlantStore } from '../store/sqlite-store.ts';

export const TEST_TOKEN = 'test-token-0123456789abcdef';

export type TestServer = {
  url: string;
  dataDir: string;
  store: SqlitePlantStore;
  /** Stops the server and closes the store; the data directory is kept until `cleanup`. */
  stop(): Promise<void>;
  /** Stops everything and removes the data directory. */
  cleanup(): Promise<void>;
};

export const makeDataDir = (): string => mkdtempSync(join(tmpdir(), 'plant-api-test-'));

/** What a test may set on the app besides its store and TEST_TOKEN. */
export type TestAppOptions = Omit<AppOptions, 'store' | 'authenticate'>;

/** The real app on a real SQLite store in a temporary directory, listening on 127.0.0.1:<ephemeral>. */
export const startTestServer = async (dataDir = makeDataDir(), options: TestAppOptions = {}): Promise<TestServer> => {
  const store = await SqlitePlantStore.open(dataDir);
  const app = createApp({ ...options, store, authenticate: staticTokens([hashToken(TEST_TOKEN)]) });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = createServer(app)
      .listen(0, '127.0.0.1', () => resolve(listening))
      .once('error', reject);
  });
  answerClientErrors(server);
  const { port } = server.address() as AddressInfo;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    store,
    stop,
    cleanup: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};
