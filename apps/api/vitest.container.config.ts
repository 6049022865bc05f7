import { defineConfig } from 'vitest/config';
import SkipGuard from '../../scripts/skip-guard.ts';

/** `pnpm test:container`: apps/api/Dockerfile built and run by a real Docker engine. */
export default defineConfig({
  test: {
    include: ['test/container.test.ts'],
    // Under CI a skipped test fails the run unless allowed (scripts/skip-guard.ts).
    reporters: ['default', new SkipGuard()],
    globalSetup: ['test/support/postgres-global-setup.ts'],
    // The build's own timeout is in the test; vitest's default would cut the engine's start short.
    hookTimeout: 25 * 60_000,
  },
});
