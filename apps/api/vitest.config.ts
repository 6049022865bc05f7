import { configDefaults, defineConfig } from 'vitest/config';
import SkipGuard, { allButNotModelled } from '../../scripts/skip-guard.ts';
import { SOURCE_NODE_FLAGS } from './test/support/source-node-flags.ts';

/** The HTTP suites that run on PostgreSQL too (through startTestServer, see test/support/test-server.ts). */
const ON_BOTH_STORES = [
  'src/plants/create-plant.test.ts',
  'src/plants/read-delete-plants.test.ts',
  'src/plants/hostile-input.test.ts',
  'src/auth/bearer-auth.test.ts',
  'src/webhooks/endpoints/webhook-ids.test.ts',
  'src/webhooks/endpoints/webhook-registration-clock.test.ts',
  'src/webhooks/events/webhook-events.test.ts',
  'src/webhooks/endpoints/test-delivery.test.ts',
  'src/webhooks/endpoints/idempotency-key.test.ts',
  'src/webhooks/delivery/webhook-rate-limit.test.ts',
  'src/webhooks/endpoints/webhook-ownership.test.ts',
  'src/http/concurrent-lists.test.ts',
  'src/webhooks/endpoints/delivery-pages.test.ts',
  'test/openapi-fuzz.test.ts',
];

export default defineConfig({
  test: {
    // Under CI a skipped test fails the run unless allowed (scripts/skip-guard.ts).
    reporters: ['default', new SkipGuard()],
    // A safety net against a hang, not a measure of speed: generous, so that a busy machine
    // (pnpm test:stress) cannot fail a test that does much work, such as a property run.
    testTimeout: 30_000,
    // No WebAssembly-to-JavaScript wrapper is ever compiled: V8 faults freeing them (see the module).
    execArgv: SOURCE_NODE_FLAGS,
    // One throwaway PostgreSQL server per project; each test file makes its own databases.
    globalSetup: ['test/support/postgres-global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'api',
          // Unit and HTTP tests sit beside the code; tests that start the service as a process in test/.
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          // The image build takes minutes and a Docker engine: `pnpm test:container` (vitest.container.config.ts).
          exclude: [...configDefaults.exclude, 'test/container.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'api-postgres',
          include: ON_BOTH_STORES,
          env: { PLANT_TEST_STORE: 'postgres' },
        },
      },
      {
        extends: true,
        // The same suites against @org/plant-client/testing's fake: where it answers differently
        // from the service, this fails. It skips only what the fake deliberately does not model,
        // listed by title in scripts/skip-guard.ts (FAKE_DOES_NOT_MODEL).
        test: {
          name: 'api-fake',
          include: [...ON_BOTH_STORES, 'src/webhooks/endpoints/webhook-operations.test.ts'],
          env: { PLANT_TEST_STORE: 'fake' },
          testNamePattern: allButNotModelled,
        },
      },
    ],
  },
});
