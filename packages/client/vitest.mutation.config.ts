import { configDefaults, defineConfig } from 'vitest/config';

// The tests that run this package's sources (`pnpm test:mutation`): the packed-tarball, zod 4
// consumer and README testing-examples tests run the build, which a mutant of the sources never
// reaches (and find the repository from the package, which the mutation run copies elsewhere).
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      'src/packed.test.ts',
      'src/zod4-consumer.test.ts',
      'src/testing-examples.test.ts',
    ],
  },
});
