import { afterEach, beforeEach } from 'vitest';
import { startTestServer, type TestServer } from './test-server.ts';

/**
 * A fresh test server (startTestServer) for each test of the calling file, cleaned up after it. The
 * object returned is the current test's server throughout: each test's replaces its fields.
 */
export const serverPerTest = (): TestServer => {
  const current = {} as TestServer;
  beforeEach(async () => {
    Object.assign(current, await startTestServer());
  });
  afterEach(async () => {
    await current.cleanup();
  });
  return current;
};
