import { defineConfig } from 'vitest/config';
import SkipGuard from '../../scripts/skip-guard.ts';

export default defineConfig({
  test: {
    // Under CI a skipped test fails the run unless allowed (scripts/skip-guard.ts).
    reporters: ['default', new SkipGuard()],
  },
});
