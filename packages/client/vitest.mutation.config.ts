import { configDefaults, defineConfig } from 'vitest/config';

// The tests that run this package's sources (`pnpm test:mutation`): the packed-tarball and zod 4
// consumer tests run the build, which a mutant of the sources never reaches.
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'src/packed.test.ts', 'src/zod4-consumer.test.ts'],
  },
});
