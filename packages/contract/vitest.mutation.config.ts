import { defineConfig } from 'vitest/config';

// The tests of this package's sources (`pnpm test:mutation`); those of scripts/ check the release
// tooling, which is not mutated.
export default defineConfig({
  test: { include: ['src/**/*.test.ts'] },
});
