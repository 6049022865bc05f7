import { defineConfig } from 'vitest/config';

/** `pnpm test:container`: apps/api/Dockerfile built and run by a real Docker engine. */
export default defineConfig({
  test: {
    include: ['test/container.test.ts'],
    globalSetup: ['src/testing/postgres-global-setup.ts'],
    // The build's own timeout is in the test; vitest's default would cut the engine's start short.
    hookTimeout: 25 * 60_000,
  },
});
