import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Unit and HTTP tests sit beside the code; tests that start the service as a process in test/.
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The image build takes minutes and a Docker engine: `pnpm test:container` (vitest.container.config.ts).
    exclude: [...configDefaults.exclude, 'test/container.test.ts'],
    // One throwaway PostgreSQL server for the whole run; each test file makes its own databases.
    globalSetup: ['src/testing/postgres-global-setup.ts'],
  },
});
