import { strykerOptions } from '../../scripts/stryker-options.ts';

// The fake (@org/plant-client/testing), apart from the rest of the client: most of its tests are
// the API's HTTP suites on the `api-fake` project, which import it as a workspace package, so they
// reach it only in place. Stryker mutates these files where they are and puts the originals back
// at the end (a run cut short with kill -9 leaves them changed: `git checkout` them).
const options = strykerOptions(['src/plant-store-fake/**/*.ts', '!src/plant-store-fake/**/*.test.ts']);

export default {
  ...options,
  inPlace: true,
  // Every test that reaches a mutant runs (per-test coverage); a test the import graph does not
  // link to the fake (the API's suites load it dynamically) must not be left out of the first run.
  vitest: { configFile: 'vitest.mutation-fake.config.ts', related: false },
  jsonReporter: { fileName: 'reports/mutation-fake/mutation.json' },
  incrementalFile: 'reports/mutation-fake/incremental.json',
};
