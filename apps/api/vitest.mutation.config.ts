import { defineConfig } from 'vitest/config';

/**
 * The tests that reach the pure modules `pnpm test:mutation` mutates (stryker.config.ts), on the
 * embedded store: their own unit tests, and the HTTP tests of body parsing and error answers. The
 * create-plant and hostile-input suites reach the same code too, at a server per test and a thousand
 * generated bodies: every mutant they cover would cost them whole.
 */
export default defineConfig({
  test: {
    // Instrumented code on a shared machine runs several times slower: one-parser's 1,000-body
    // comparison went past vitest's 5 s default under load with nothing wrong.
    testTimeout: 30_000,
    include: [
      'src/config.test.ts',
      'src/auth/rate-limiter.test.ts',
      'src/auth/rate-limit.test.ts',
      'src/http/json-body.test.ts',
      'src/http/error-handler.test.ts',
      'src/http/one-parser.test.ts',
      'src/http/documented-statuses.test.ts',
      'src/webhooks/secrets/signature.test.ts',
      'src/webhooks/targets/target-address.test.ts',
    ],
  },
});
