import { strykerOptions } from '../../scripts/stryker-options.ts';

// The fake (src/plant-store-fake) has a run of its own, with the API's suites: stryker.fake.config.ts.
export default strykerOptions([
  'src/**/*.ts',
  '!src/**/*.test.ts',
  '!src/**/*.test-d.ts',
  '!src/testing/**',
  '!src/plant-store-fake/**',
]);
