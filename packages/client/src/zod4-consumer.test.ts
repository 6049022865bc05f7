/**
 * A project that already uses zod 4 installs the packed packages, as npm and as pnpm would, and
 * type-checks (`skipLibCheck: false`) and runs both clients against the real API. Everything comes
 * from tarballs (the two packed packages and, packed from this workspace's installs, the registry
 * packages they need), so the package managers resolve the tree themselves, @ts-rest/core's
 * optional zod peer included, without the network.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Api,
  expectBuilt,
  installedForClient,
  packPackages,
  readManifest,
  run,
  settleAll,
  startApi,
  typeErrors,
} from './testing/consumer-project.ts';

const TOKEN = 'zod4-consumer-token-0123456789';
const require = createRequire(import.meta.url);

const consumerTs = `
import { createPlantClient, createPlantRestClient, PlantApiError, type PlantWithId } from '@org/plant-client';
import { NewPlant } from '@org/plant-contract';
import { z } from 'zod';
import { z as z3 } from 'zod3';

const [baseUrl = '', token = '', firstId = '0'] = (globalThis as unknown as { process: { argv: string[] } }).process.argv.slice(2);
const id = 2n ** 61n + BigInt(firstId);

// The project's own schemas are zod 4.
const Order = z.object({ quantity: z.number().int().positive() });
if (!('toJSONSchema' in z)) throw new Error('zod is not zod 4 here');

// A contract schema inside a zod 4 schema: wrapped, keeping its verdict.
const Restock = z.object({
  plant: z.custom<NewPlant>((value) => NewPlant.safeParse(value).success, 'must be a NewPlant'),
  order: Order,
});
// Or composed with zod 3 itself, the zod the contract is built with.
const Label = z3.object({ plant: NewPlant, printedAt: z3.string() });

const plants = createPlantClient({ baseUrl, token: async () => token, maxRetries: 1 });
const created = await plants.createPlant({ id, name: 'Fern', tag: 'zod4' });
const { data: read, requestId } = await plants.getPlant(id).withResponse();
const rest = createPlantRestClient({ baseUrl, token });
const restRead = await rest.getPlant({ params: { id: String(id) } });
const page = await plants.listPlants({ tag: 'zod4', pageSize: 1 });
const listed: PlantWithId[] = [];
for await (const plant of plants.listPlants({ tag: 'zod4' })) listed.push(plant);
const missing = await plants.getPlant(id + 1n).catch((error: unknown) => error);
await plants.deletePlant(id);

console.log(
  JSON.stringify({
    created,
    readIdExact: read.id === id,
    requestId: typeof requestId,
    restRead: restRead.status === 200 && restRead.body.id === id && restRead.status,
    page: page.data.length,
    listed: listed.length,
    missing: PlantApiError.isInstance(missing) && missing.status,
    restock: Restock.safeParse({ plant: { id: 1, name: 'Fern' }, order: { quantity: 2 } }).success,
    restockRefused: Restock.safeParse({ plant: { id: 'one', name: 'Fern' }, order: { quantity: 2 } }).success,
    label: Label.safeParse({ plant: { id: 1, name: 'Fern' }, printedAt: 'now' }).success,
  }),
);
`;

const tsconfig = {
  compilerOptions: {
    target: 'es2022',
    lib: ['es2022', 'dom'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: [],
    strict: true,
    skipLibCheck: false,
    outDir: 'dist',
  },
  include: ['consumer.ts'],
};

/**
 * The registry packages the packed ones need, and their own dependencies, as tarballs packed from
 * this workspace's installs (the versions its lockfile pins): name → tarball. zod 3 and zod 4 both
 * go by `zod`, so they are returned apart.
 */
const packRegistryPackages = async (destination: string) => {
  const pack = async (dir: string): Promise<string> => {
    const { name, version } = readManifest(dir);
    const file = join(destination, `${name.replace('@', '').replace('/', '-')}-${version}.tgz`);
    // A tarball's first directory is the package, whatever its name (npm and pnpm strip it). Files
    // of the same content are one inode in pnpm's store: stored as hard links, they would unpack empty.
    const args = ['-czhf', file, '--hard-dereference', '-C', dirname(dir), dir.slice(dirname(dir).length + 1)];
    // Another suite linking the same store files meanwhile changes their ctime (not their content):
    // GNU tar then fails with "file changed as we read it". Packing again reads them settled.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await run('tar', args);
        return file;
      } catch (error) {
        const changed = String((error as { stderr?: unknown }).stderr).includes('file changed as we read it');
        if (!changed || attempt === 3) throw error;
      }
    }
  };
  const closure = new Map<string, string>();
  const visit = (name: string, dir: string) => {
    closure.set(name, dir);
    // A package's dependencies sit beside it, in the node_modules of pnpm's virtual store.
    const nodeModules = dir.slice(0, dir.lastIndexOf('/node_modules/') + '/node_modules/'.length);
    for (const dependency of Object.keys(readManifest(dir).dependencies ?? {})) {
      if (!closure.has(dependency)) visit(dependency, realpathSync(join(nodeModules, dependency)));
    }
  };
  for (const name of ['@ts-rest/core', 'standardwebhooks']) visit(name, installedForClient(name));
  const tarballs: Record<string, string> = {};
  await Promise.all([...closure].map(async ([name, dir]) => (tarballs[name] = await pack(dir))));
  const [zod3, zod4] = await Promise.all([pack(installedForClient('zod')), pack(installedForClient('zod-v4'))]);
  return { tarballs, zod3, zod4 };
};

type Manager = 'npm' | 'pnpm';

/** A fresh project with zod 4 at the top level and the packed packages, installed offline by `manager`. */
const prepareConsumer = async (
  dir: string,
  manager: Manager,
  packed: { contract: string; client: string },
  registry: Awaited<ReturnType<typeof packRegistryPackages>>,
): Promise<void> => {
  mkdirSync(dir);
  const file = (path: string) => `file:${path}`;
  const shared = Object.fromEntries(Object.entries(registry.tarballs).map(([name, path]) => [name, file(path)]));
  const manifest = {
    name: `zod4-consumer-${manager}`,
    private: true,
    type: 'module',
    dependencies: {
      '@org/plant-client': file(packed.client),
      '@org/plant-contract': file(packed.contract),
      zod: file(registry.zod4),
      zod3: file(registry.zod3),
    },
    // No registry here: every name the packages ask for by version points at its tarball. zod is
    // pointed at zod 3 only below the two packages, as a registry would resolve their range.
    ...(manager === 'npm'
      ? {
          overrides: {
            ...shared,
            '@org/plant-contract': { '.': file(packed.contract), zod: file(registry.zod3) },
            '@org/plant-client': { zod: file(registry.zod3) },
          },
        }
      : {
          pnpm: {
            overrides: {
              ...shared,
              '@org/plant-contract': file(packed.contract),
              '@org/plant-client>zod': file(registry.zod3),
              '@org/plant-contract>zod': file(registry.zod3),
            },
          },
        }),
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  writeFileSync(join(dir, 'consumer.ts'), consumerTs);
  const install =
    manager === 'npm'
      ? ['npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts']]
      : ['pnpm', ['install', '--offline', '--no-frozen-lockfile', '--ignore-scripts']];
  await run(install[0] as string, install[1] as string[], { cwd: dir, timeout: 120_000 });
};

const MANAGERS: Manager[] = ['pnpm', 'npm'];

describe('a zod 4 project installing the packed packages', () => {
  let work: string;
  let api: Api | undefined;
  const consumers = {} as Record<Manager, { dir: string; errors: string }>;

  beforeAll(async () => {
    expectBuilt();
    work = mkdtempSync(join(tmpdir(), 'plant-client-zod4-'));
    const apiStarted = startApi(join(work, 'data'), TOKEN).then((started) => {
      api = started;
    });
    const consumersReady = (async () => {
      const tarballs = join(work, 'tarballs');
      mkdirSync(tarballs);
      const [packed, registry] = await Promise.all([packPackages(tarballs), packRegistryPackages(tarballs)]);
      await Promise.all(
        MANAGERS.map(async (manager) => {
          const dir = join(work, manager);
          await prepareConsumer(dir, manager, packed, registry);
          consumers[manager] = { dir, errors: await typeErrors(dir, 'tsconfig.json') };
        }),
      );
    })();
    await settleAll([consumersReady, apiStarted]);
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Where `name` resolves from the directory `from` (following links, as Node does). */
  const resolvedVersion = (name: string, from: string) =>
    readManifest(dirname(realpathSync(require.resolve(`${name}/package.json`, { paths: [from] })))).version;

  it.each(MANAGERS)('%s resolves zod 4 for the project, zod 3 for the packages and their @ts-rest/core', (manager) => {
    const consumer = consumers[manager].dir;
    expect(resolvedVersion('zod', consumer)).toMatch(/^4\./);
    for (const name of ['client', 'contract']) {
      const installedAt = realpathSync(join(consumer, 'node_modules/@org', `plant-${name}`));
      expect(resolvedVersion('zod', installedAt)).toMatch(/^3\./);
      const tsRest = dirname(realpathSync(require.resolve('@ts-rest/core/package.json', { paths: [installedAt] })));
      expect(resolvedVersion('zod', tsRest)).toMatch(/^3\./);
    }
    expect(readdirSync(join(consumer, 'node_modules'))).toContain('zod3');
  });

  it.each(MANAGERS)('%s: the project type-checks with skipLibCheck off', (manager) => {
    expect(consumers[manager].errors).toBe('');
  });

  it.each(MANAGERS)(
    '%s: runs both clients against the API and composes the contract schemas',
    async (manager) => {
      const firstId = String(MANAGERS.indexOf(manager));
      const { stdout } = await run(process.execPath, ['dist/consumer.js', api?.url ?? '', TOKEN, firstId], {
        cwd: consumers[manager].dir,
        timeout: 30_000,
      });
      expect(JSON.parse(stdout)).toStrictEqual({
        created: { name: 'Fern', tag: 'zod4' },
        readIdExact: true,
        requestId: 'string',
        restRead: 200,
        page: 1,
        listed: 1,
        missing: 404,
        restock: true,
        restockRefused: false,
        label: true,
      });
    },
    60_000,
  );
});
