import { strykerOptions } from '../../scripts/stryker-options.ts';

export default strykerOptions(['src/**/*.ts', '!src/**/*.test.ts', '!src/**/*.test-d.ts']);
