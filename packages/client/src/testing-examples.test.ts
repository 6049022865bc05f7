/**
 * The README's "Testing your code" examples (examples/testing/*.test.ts) as a consumer runs them:
 * the packed packages unpacked into a fresh project's node_modules, with msw, vitest and the
 * registry packages the client needs linked from this workspace's installs (the versions its
 * lockfile pins), once with zod 3 at the top level and once with zod 4 (zod 3 then only below the
 * packages, as a package manager resolves their range). Each project type-checks under strict
 * TypeScript with the libraries' types checked too, and runs the examples with vitest. (That npm
 * and pnpm install the tarballs themselves is zod4-consumer.test.ts's to show.)
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clientDir,
  DOM_LIB,
  expectBuilt,
  installedForClient,
  linkDir,
  packPackages,
  run,
  STRICT_CHECKS,
  typeErrors,
} from './testing/consumer-project.ts';

const examples = join(clientDir, 'examples/testing');
const require = createRequire(import.meta.url);

const tsconfig = {
  compilerOptions: {
    ...STRICT_CHECKS,
    // msw's types describe browser globals (fetch, WebSocket, MessageEvent) as the DOM library does.
    lib: DOM_LIB,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: ['node'],
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
  },
  include: ['examples'],
};

const unpack = async (tarball: string, into: string) => {
  mkdirSync(into, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', into, '--strip-components=1']);
};

type Zod = 'zod 3' | 'zod 4';

/** A consumer project with the examples and the packed packages, `zod` at its top level. */
const prepareConsumer = async (dir: string, zod: Zod, packed: { contract: string; client: string }) => {
  const modules = join(dir, 'node_modules');
  const client = join(modules, '@org/plant-client');
  const contract = join(modules, '@org/plant-contract');
  await Promise.all([unpack(packed.client, client), unpack(packed.contract, contract)]);
  for (const name of ['@ts-rest/core', 'standardwebhooks', 'msw', 'vitest', '@types/node']) {
    linkDir(installedForClient(name), join(modules, name));
  }
  linkDir(installedForClient(zod === 'zod 3' ? 'zod' : 'zod-v4'), join(modules, 'zod'));
  // Below the packages, their own range (zod 3), wherever the top level has another.
  if (zod === 'zod 4')
    for (const dependent of [client, contract]) linkDir(installedForClient('zod'), join(dependent, 'node_modules/zod'));
  cpSync(examples, join(dir, 'examples/testing'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'testing-examples', private: true, type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
};

const ZODS: Zod[] = ['zod 3', 'zod 4'];

describe("the README's testing examples in a consumer project", () => {
  let work: string;
  const consumers = {} as Record<Zod, string>;

  beforeAll(async () => {
    expectBuilt();
    work = mkdtempSync(join(tmpdir(), 'plant-client-testing-'));
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    const packed = await packPackages(tarballs);
    await Promise.all(
      ZODS.map(async (zod) => {
        consumers[zod] = join(work, zod.replace(' ', ''));
        await prepareConsumer(consumers[zod], zod, packed);
      }),
    );
  }, 120_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.each(ZODS)('type-check under strict TypeScript, libraries included, with %s', async (zod) => {
    expect(await typeErrors(consumers[zod], 'tsconfig.json')).toBe('');
  });

  it.each(ZODS)(
    'run with vitest against the packed fake, with %s',
    async (zod) => {
      const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
      await run(process.execPath, [vitest, 'run', '--reporter=json', '--outputFile=report.json'], {
        cwd: consumers[zod],
        timeout: 60_000,
      });
      const report = JSON.parse(readFileSync(join(consumers[zod], 'report.json'), 'utf8')) as {
        numTotalTests: number;
        numPassedTests: number;
        success: boolean;
      };
      expect(report).toMatchObject({ success: true, numTotalTests: 7, numPassedTests: 7 });
    },
    90_000,
  );
});
