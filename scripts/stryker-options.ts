/**
 * The StrykerJS options every package's `stryker.config.ts` shares (`pnpm test:mutation`, see
 * scripts/test-mutation.ts). A package adds the files to mutate. The plugins are named by path:
 * pnpm keeps them out of reach of Stryker's own "@stryker-mutator/*" lookup.
 */
import type { PartialStrykerOptions } from '@stryker-mutator/api/core';

/** The least share of valid mutants, in percent, that a package's tests must detect. */
export const MUTATION_SCORE_THRESHOLD = 85;

export function strykerOptions(mutate: string[]): PartialStrykerOptions {
  return {
    plugins: [
      import.meta.resolve('@stryker-mutator/vitest-runner'),
      import.meta.resolve('@stryker-mutator/typescript-checker'),
    ],
    testRunner: 'vitest',
    vitest: { configFile: 'vitest.mutation.config.ts', related: true },
    checkers: ['typescript'],
    tsconfigFile: 'tsconfig.json',
    // Each mutant runs only the tests that reached it in the first run.
    coverageAnalysis: 'perTest',
    mutate,
    // The machine is shared: one test runner and one type checker at a time.
    concurrency: 1,
    reporters: ['clear-text', 'json', 'progress-append-only'],
    jsonReporter: { fileName: 'reports/mutation/mutation.json' },
    clearTextReporter: { allowColor: false, logTests: false, allowEmojis: false },
    // scripts/test-mutation.ts judges the score against MUTATION_SCORE_THRESHOLD, after every package ran.
    thresholds: { high: 90, low: MUTATION_SCORE_THRESHOLD, break: null },
    // `--incremental` reruns only the mutants whose code or covering tests changed since the last
    // run (the file stays on this machine). Off by default: it keeps some stale survivors, static
    // mutants that a new test kills (seen with config.ts).
    incrementalFile: 'reports/mutation/incremental.json',
    tempDirName: '.stryker-tmp',
    cleanTempDir: 'always',
  };
}
