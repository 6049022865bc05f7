import { fileURLToPath } from 'node:url';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import apiConfig from '../../apps/api/vitest.config.ts';

const apiRoot = fileURLToPath(new URL('../../apps/api/', import.meta.url));
const apiFake = ((apiConfig.test?.projects ?? []) as TestProjectInlineConfiguration[]).find(
  (project) => project.test?.name === 'api-fake',
);
if (apiFake?.test === undefined) throw new Error('apps/api/vitest.config.ts has no api-fake project.');

// The tests that run the fake's sources (`pnpm test:mutation`, stryker.fake.config.ts): its own
// tests and examples here, and the API's suites that hold it to the service's answers.
export default defineConfig({
  test: {
    // The API's safety net against a hang (vitest's default when it sets none).
    testTimeout: apiConfig.test?.testTimeout ?? 5_000,
    projects: [
      {
        test: {
          name: 'client-fake',
          include: ['src/plant-store-fake/**/*.test.ts', 'examples/testing/**/*.test.ts'],
        },
      },
      {
        test: {
          ...apiFake.test,
          root: apiRoot,
          // Stryker sets every project's testNamePattern to the tests it wants (to none in its first
          // run), replacing the project's, so the tests the fake does not model are skipped by a
          // setup file too.
          setupFiles: [fileURLToPath(new URL('../../scripts/skip-not-modelled.ts', import.meta.url))],
        },
      },
      {
        test: {
          name: 'api-fake-bodies',
          root: apiRoot,
          // The fake's delivery bodies beside the service's, for the same requests.
          include: ['src/**/fake-delivery-bodies.test.ts'],
        },
      },
    ],
  },
});
