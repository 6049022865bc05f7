import { defineConfig } from 'vitest/config';
import SkipGuard from '../../scripts/skip-guard.ts';

export default defineConfig({
  test: {
    // Unit and HTTP tests sit beside the code; tests that start the service as a process in test/.
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // One throwaway PostgreSQL server for the whole run; each test file makes its own databases.
    globalSetup: ['src/testing/postgres-global-setup.ts'],
    // Under CI a skipped test fails the run unless allowed (scripts/skip-guard.ts).
    reporters: ['default', new SkipGuard()],
  },
});
