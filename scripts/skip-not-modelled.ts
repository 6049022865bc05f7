/**
 * A vitest setup file that skips what @org/plant-client/testing's fake does not model
 * (FAKE_DOES_NOT_MODEL in skip-guard.ts), as the `api-fake` project's testNamePattern does, for a
 * runner that sets testNamePattern itself: Stryker (packages/client/vitest.mutation-fake.config.ts).
 */
import { beforeEach } from 'vitest';
import { FAKE_DOES_NOT_MODEL } from './skip-guard.ts';

beforeEach((context) => {
  const { name, file } = context.task;
  if (FAKE_DOES_NOT_MODEL.some((test) => test.title === name && file.filepath.endsWith(`/${test.file}`))) {
    context.skip('the fake does not model it (scripts/skip-guard.ts)');
  }
});
