/**
 * A vitest reporter that keeps skipped tests from going unnoticed. Every package's vitest config
 * adds it beside the default reporter. Under CI (`CI` set, as `.ci/run` does), a skipped test fails
 * the run unless it is on the allow-list below; the allowed ones that did skip are printed at the
 * end, so a run says what it did not check. Outside CI it only prints the skips.
 */
import type { Reporter, TestModule } from 'vitest/node';

type AllowedSkip = {
  /** The vitest project that may skip it; any project when absent. */
  project?: string;
  /** The test file, relative to its package. */
  file: RegExp;
  /** The test's full name (describe blocks and title). */
  test: RegExp;
  /** Why skipping it may be right on some CI machine. */
  why: string;
};

/**
 * What the API's HTTP suites test that @org/plant-client/testing's fake deliberately does not model:
 * the `api-fake` project (apps/api/vitest.config.ts) skips exactly these, by title, and nothing else.
 */
const DELIVERY = 'delivery attempts: the fake records what it would deliver and POSTs nothing';

export const FAKE_DOES_NOT_MODEL = [
  {
    file: 'src/plants/create-plant.test.ts',
    title: 'answers 200 with exactly { name, tag } and stores the plant durably',
    why: 'durability: the fake keeps plants in memory, and a restart starts empty',
  },
  {
    file: 'src/plants/read-delete-plants.test.ts',
    title: 'serves or sheds (503, Retry-After) a flood of the largest pages, and serves a create right after',
    why: 'admission and the answer budget: the fake sheds nothing, and has no /healthz',
  },
  {
    file: 'src/webhooks/endpoints/idempotency-key.test.ts',
    title:
      'answers 500 in the Error shape, and lives on, when PLANT_WEBHOOK_SECRETS_KEY changed since the answer was kept',
    why: 'the fake keeps no secrets at rest, and a restart starts empty',
  },
  {
    file: 'src/webhooks/endpoints/idempotency-key.test.ts',
    title: 'answers a passing lookup failure 503 with Retry-After and keeps it not; a name that does not exist is kept',
    why: 'the fake looks no webhook host up',
  },
  {
    file: 'src/webhooks/endpoints/idempotency-key.test.ts',
    title: 'answers 429 with Retry-After to a new key once the principal has its most kept; its kept keys still replay',
    why: 'the fake keeps every key, without a cap',
  },
  {
    file: 'src/webhooks/endpoints/idempotency-key.test.ts',
    title: 'deletes expired keys as keys are written, with no delivery running',
    why: 'the store behind the service: the fake has none to look into',
  },
  {
    file: 'src/webhooks/endpoints/idempotency-key.test.ts',
    title: 'seals at start the answers kept before PLANT_WEBHOOK_SECRETS_KEY was set, and replays them',
    why: 'the fake keeps no secrets at rest, and a restart starts empty',
  },
  {
    file: 'src/webhooks/endpoints/test-delivery.test.ts',
    title: "counts a principal's tests of an endpoint across replicas, the limit a minute in all",
    why: 'replicas: the fake is one process, with no store to share',
  },
  {
    file: 'src/webhooks/endpoints/test-delivery.test.ts',
    title: "answers 429 to a principal with its most tests in flight, while another principal's test goes",
    why: 'the fake sends its test deliveries through sendTestDelivery, with no bound in flight',
  },
  {
    file: 'src/auth/bearer-auth.test.ts',
    title: 'refuses two Authorization headers, even when one is valid',
    why: 'fetch joins repeated headers into one, so the fake never sees two Authorization headers',
  },
  {
    file: 'src/auth/bearer-auth.test.ts',
    title: 'answers oversized headers with 431 and the Error body, never 500',
    why: "Node's HTTP parser answers 431 before any handler, and fetch has no such limit",
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title:
      're-enabling an endpoint disabled by 410 Gone clears the reason; recover then sends what the 410 failed, with its webhook-id',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title: 'disabling holds pending deliveries (not attempted, still pending); enabling again sends them',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title: 'answers a new secret; during the grace deliveries verify with both secrets, after it only with the new one',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title: 'attempts again the deliveries that failed during a receiver outage, with their webhook-ids',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title: 'attempts one delivery again now, whatever its status, with its webhook-id',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title: 'updates, rotates, recovers and retries; verifyPlantWebhook takes both secrets while rotating',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-ids.test.ts',
    title: 'are never issued twice, however often the endpoint is deleted and registered again',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-ids.test.ts',
    title: 'are never issued twice after retention emptied the outbox',
    why: 'retention and delivery attempts: the fake prunes nothing and POSTs nothing',
  },
  {
    file: 'src/webhooks/endpoints/webhook-registration-clock.test.ts',
    title: 'is the store’s: a service clock an hour ahead still delivers the first plant created after registration',
    why: DELIVERY,
  },
  {
    file: 'src/webhooks/endpoints/webhook-operations.test.ts',
    title: 'with a key, the database files never contain the secret, and deliveries still verify',
    why: 'secrets at rest: the fake has no database files (and sends no deliveries)',
  },
  {
    file: 'src/webhooks/endpoints/test-delivery.test.ts',
    title: 'reports a receiver that never answers as timed out after PLANT_WEBHOOK_TIMEOUT_MS',
    why: 'a real timeout against a real socket: the fake hands test deliveries to the sender it is given, which keeps no timeout of its own',
  },
  {
    file: 'src/webhooks/endpoints/test-delivery.test.ts',
    title: 'refuses to send to a host that resolves to a private address when private targets are not allowed',
    why: 'name lookups and the address guard on connect: the fake looks no host up and opens no connection',
  },
  {
    file: 'src/webhooks/endpoints/test-delivery.test.ts',
    title: 'answers 503 with Retry-After once the process has its most tests in flight, and serves the next after',
    why: 'the bound on sockets in flight in one process: the fake holds no sockets',
  },
] as const;

const escaped = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/** A test name pattern for every test but FAKE_DOES_NOT_MODEL's (vitest's `testNamePattern`). */
export const allButNotModelled = new RegExp(
  `^(?!.*(?:${FAKE_DOES_NOT_MODEL.map(({ title }) => escaped(title)).join('|')})$)`,
);

/**
 * Skips CI may take. `.ci/run` installs Chromium and PostgreSQL and runs as root, so on it none of
 * these skip; a CI without them (a hosted runner without root, say) may skip exactly these.
 */
export const ALLOWED_SKIPS: readonly AllowedSkip[] = [
  {
    file: /^src\/store\/sqlite\/disk-full\.test\.ts$/,
    test: /^disk full under the data directory/,
    // Mounting a small tmpfs to fill is the only honest disk-full, and only root may mount.
    why: 'needs root to mount a tmpfs',
  },
  {
    file: /^test\/connection-surge\.test\.ts$/,
    test: /./,
    // Thousands of sockets need the hard open-file limit raised, which an unprivileged runner may not.
    why: 'needs a hard open-file limit above the surge (ulimit -Hn)',
  },
  {
    file: /^src\/packed\.test\.ts$/,
    test: /Node 20/,
    // The client promises Node 20 support; a machine without a Node 20 binary cannot try it.
    why: 'needs a Node 20 binary (PLANT_NODE_20)',
  },
  ...FAKE_DOES_NOT_MODEL.map(({ file, title, why }) => ({
    project: 'api-fake',
    file: new RegExp(`^${escaped(file)}$`),
    test: new RegExp(`(?:^| > )${escaped(title)}$`),
    why: `the fake does not model it: ${why}`,
  })),
];

type Skipped = { project: string; file: string; test: string; note: string | undefined };

const skippedTests = (modules: ReadonlyArray<TestModule>): Skipped[] =>
  modules.flatMap((module) => {
    const file = module.relativeModuleId;
    const project = module.project.name;
    return [...module.children.allTests()]
      .filter((test) => test.result().state === 'skipped')
      .map((test) => ({ project, file, test: test.fullName, note: test.result().note }));
  });

const allowance = (skip: Skipped) =>
  ALLOWED_SKIPS.find(
    (allowed) =>
      (allowed.project === undefined || allowed.project === skip.project) &&
      allowed.file.test(skip.file) &&
      allowed.test.test(skip.test),
  );

export default class SkipGuard implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped = skippedTests(modules);
    if (skipped.length === 0) return;
    const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
    const refused: Skipped[] = [];
    const lines = ['', `${skipped.length} test(s) skipped:`];
    for (const skip of skipped) {
      const allowed = allowance(skip);
      if (!allowed) refused.push(skip);
      const reason = allowed ? `allowed: ${allowed.why}` : ci ? 'NOT ALLOWED in CI' : 'not on the allow-list';
      lines.push(`  ${skip.file} > ${skip.test}${skip.note ? ` (${skip.note})` : ''} — ${reason}`);
    }
    if (ci && refused.length > 0) {
      lines.push(
        `Under CI a skipped test fails the run unless scripts/skip-guard.ts allows it (with why): ${refused.length} not allowed.`,
      );
      process.exitCode = 1;
    }
    console.log(lines.join('\n'));
  }
}
