import { defineConfig } from 'vitest/config';
import SkipGuard from '../../scripts/skip-guard.ts';

export default defineConfig({
  test: {
    // Under CI a skipped test fails the run unless allowed (scripts/skip-guard.ts).
    reporters: ['default', new SkipGuard()],
    // A safety net against a hang, not a measure of speed: generous, so that a busy machine
    // (pnpm test:stress) cannot fail a test that does much work, such as a property run.
    testTimeout: 30_000,
  },
});
