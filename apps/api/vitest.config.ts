import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // One throwaway PostgreSQL server for the whole run; each test file makes its own databases.
    globalSetup: ['src/testing/postgres-global-setup.ts'],
  },
});
