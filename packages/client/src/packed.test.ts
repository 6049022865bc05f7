/**
 * What consumer teams install works: the contract and the client are packed as they would be
 * published (`pnpm pack`: dist, rewritten exports and dependency versions), installed into a fresh
 * project outside the workspace, type-checked there in strict mode, and run against the real API,
 * under this Node and under Node 20 when it is on the machine.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Api,
  strictConsumerTsconfig as consumerTsconfig,
  DOM_LIB,
  expectBuilt,
  packageDirs as packages,
  packPackages,
  readManifest,
  repoRoot,
  run,
  STRICT_CHECKS,
  settleAll,
  startApi,
  typeErrors,
} from './testing/consumer-project.ts';

const TOKEN = 'packed-test-token-0123456789';
/** Node 20 is the oldest Node the client supports; CI machines have one as /usr/bin/node. */
const NODE_20 = process.env.PLANT_NODE_20 ?? '/usr/bin/node';

const consumerTs = `
import {
  ConflictError,
  createPlantClient,
  createPlantRestClient,
  NotFoundError,
  PlantApiError,
  type PlantClient,
  type PlantWithId,
} from '@org/plant-client';
import { NewPlant, contract } from '@org/plant-contract';
import { PlantWebhookVerificationError, verifyPlantWebhook } from '@org/plant-client/webhooks';
import { createHmac } from 'node:crypto';

const [baseUrl = '', token = '', firstId = '0'] = process.argv.slice(2);
const plants: PlantClient = createPlantClient({ baseUrl, token, maxRetries: 1, timeoutMs: 5_000 });
const id = 2n ** 60n + BigInt(firstId);

// The types are the contract's, not any: these lines must fail to type-check.
// @ts-expect-error name is required
void (() => plants.createPlant({ id: 1 }));
// @ts-expect-error ids are numbers or bigints
void (() => plants.getPlant('1'));
// @ts-expect-error no such option
createPlantClient({ baseUrl, token, retries: 3 });

const newPlant: NewPlant = NewPlant.parse({ id, name: 'Fern', tag: 'packed' });
const created = await plants.createPlant(newPlant);
const replayed = await plants.createPlant(newPlant, { maxRetries: 0, signal: AbortSignal.timeout(5_000) });
const conflict = await plants.createPlant({ id, name: 'Cactus' }).catch((error: unknown) => error);
const read: PlantWithId = await plants.getPlant(id);
const rest = createPlantRestClient({ baseUrl, token, maxRetries: 1 });
const restRead = await rest.getPlant({ params: { id: String(id) }, timeoutMs: 5_000 });
// @ts-expect-error path parameters are strings
void (() => rest.getPlant({ params: { id } }));
const listed: PlantWithId[] = [];
for await (const plant of plants.listPlants({ tag: 'packed', pageSize: 1 })) listed.push(plant);
await plants.deletePlant(id);
const gone = await plants.getPlant(id).catch((error: unknown) => error);

// A newPlant delivery, signed as the service signs it, verified through the subpath export.
const secret = \`whsec_\${Buffer.alloc(32, 7).toString('base64')}\`;
const body = \`{"id":\${id},"name":"Fern"}\`;
const timestamp = String(Math.floor(Date.now() / 1000));
const signature = createHmac('sha256', Buffer.alloc(32, 7)).update(\`msg_1.\${timestamp}.\${body}\`).digest('base64');
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': timestamp, 'webhook-signature': \`v1,\${signature}\` };
const verified = verifyPlantWebhook(secret, body, headers);
const forged = (() => {
  try {
    return verifyPlantWebhook(secret, body.replace('Fern', 'Fake'), headers);
  } catch (error) {
    return error;
  }
})();

console.log(
  JSON.stringify({
    node: process.versions.node,
    created,
    replayed,
    conflict: ConflictError.isInstance(conflict) && conflict.status,
    conflictRequestId: PlantApiError.isInstance(conflict) && typeof conflict.requestId,
    readIdExact: read.id === id,
    restRead: restRead.status === 200 && restRead.body.id === id && restRead.status,
    listed: listed.map((plant) => String(plant.id)),
    gone: NotFoundError.isInstance(gone) && gone.status,
    route: contract.createPlant.path,
    webhookIdExact: verified.id === id,
    forgedRefused: PlantWebhookVerificationError.isInstance(forged) && forged.reason,
  }),
);
`;

/** A browser app: DOM types only, no @types/node. */
const browserTs = `
import { createPlantClient, PlantTimeoutError, type PlantWithId } from '@org/plant-client';

const plants = createPlantClient({ baseUrl: location.origin, token: 't', fetch: (url, init) => window.fetch(url, init) });
export const show = async (list: HTMLElement): Promise<void> => {
  try {
    for await (const plant of plants.listPlants()) list.append(String(plant.id satisfies PlantWithId['id']));
  } catch (error) {
    if (PlantTimeoutError.isInstance(error)) list.textContent = error.message;
  }
};
`;

const browserTsconfig = {
  compilerOptions: {
    ...STRICT_CHECKS,
    lib: DOM_LIB,
    module: 'preserve',
    moduleResolution: 'bundler',
    types: [],
    noEmit: true,
  },
  include: ['browser.ts'],
};

/** A CommonJS program: `require(esm)` loads the package (Node 20.19+, 22.12+); TypeScript ≥ 5.8 types it under `module: node20`. */
const commonJsTs = `
import { createPlantClient, PlantApiError } from '@org/plant-client';
import { verifyPlantWebhook } from '@org/plant-client/webhooks';

const plants = createPlantClient({ baseUrl: 'http://127.0.0.1:9', token: 't' });
console.log(JSON.stringify([typeof plants.getPlant, typeof PlantApiError.isInstance, typeof verifyPlantWebhook]));
`;

const commonJsTsconfig = {
  compilerOptions: {
    ...consumerTsconfig.compilerOptions,
    module: 'node20',
    moduleResolution: 'node16',
    outDir: 'dist',
  },
  include: ['common.cts'],
};

/**
 * The registry packages the packed ones need (and @types/node), as this workspace installed them:
 * the directory each of its packages resolves the name to. The consumer links them instead of
 * resolving them again: with no lockfile, pnpm would fetch their registry metadata (some 15 MB for
 * zod and @types/node) on every machine whose cache lacks it, with a 60 s timeout per request.
 */
const installedRegistryPackages = (): Record<string, string> => {
  const installed: Record<string, string> = {};
  for (const dir of packages) {
    for (const name of [...Object.keys(readManifest(dir).dependencies ?? {}), '@types/node']) {
      if (!name.startsWith('@org/')) installed[name] ??= realpathSync(join(dir, 'node_modules', name));
    }
  }
  return installed;
};

/**
 * Packs the contract and the client as `pnpm publish` would and installs the tarballs into a new
 * project at `consumer`, offline: the registry packages they depend on are linked from this
 * workspace (the same versions, pinned by the catalog), so nothing waits for the network.
 */
const prepareConsumer = async (work: string, consumer: string): Promise<void> => {
  const packed = await packPackages(join(work, 'tarballs'));
  const tarball = (name: 'contract' | 'client') => `file:${packed[name]}`;
  const linked = Object.fromEntries(
    Object.entries(installedRegistryPackages()).map(([name, dir]) => [name, `link:${dir}`]),
  );
  const manifest = {
    name: 'plant-consumer',
    private: true,
    type: 'module',
    dependencies: { '@org/plant-client': tarball('client'), '@org/plant-contract': tarball('contract') },
    devDependencies: { '@types/node': linked['@types/node'] },
    // The packed client asks for the contract by version, which no registry has yet.
    pnpm: { overrides: { ...linked, '@org/plant-contract': tarball('contract') } },
  };
  writeFileSync(join(consumer, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(consumerTsconfig, null, 2));
  writeFileSync(join(consumer, 'consumer.ts'), consumerTs);
  writeFileSync(join(consumer, 'tsconfig.browser.json'), JSON.stringify(browserTsconfig, null, 2));
  writeFileSync(join(consumer, 'browser.ts'), browserTs);
  writeFileSync(join(consumer, 'tsconfig.cjs.json'), JSON.stringify(commonJsTsconfig, null, 2));
  writeFileSync(join(consumer, 'common.cts'), commonJsTs);
  await run('pnpm', ['install', '--offline', '--no-frozen-lockfile'], { cwd: consumer });
};

const nodeMajor = async (node: string): Promise<number | undefined> => {
  if (!existsSync(node)) return undefined;
  const { stdout } = await run(node, ['--version']);
  return Number(/^v(\d+)/.exec(stdout.trim())?.[1]);
};

describe('the packed packages, installed by a consumer', () => {
  let work: string;
  let consumer: string;
  let api: Api | undefined;
  let nodeTypeErrors: string;

  beforeAll(async () => {
    expectBuilt();
    work = mkdtempSync(join(tmpdir(), 'plant-client-packed-'));
    consumer = join(work, 'consumer');
    mkdirSync(consumer);
    // The API starts while the consumer is prepared: neither waits for the other.
    const apiStarted = startApi(join(work, 'data'), TOKEN).then((started) => {
      api = started;
    });
    const consumerReady = prepareConsumer(work, consumer).then(async () => {
      // Compiled here rather than in a test, so that the tests that run it can also run alone.
      nodeTypeErrors = await typeErrors(consumer, 'tsconfig.json');
    });
    await settleAll([consumerReady, apiStarted]);
    // Cold on a busy machine (CI runs the API's tests beside this) it takes several times its 4 s.
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('installs only what was published: dist and source, no tests', () => {
    const installed = join(consumer, 'node_modules/@org/plant-client');
    expect(existsSync(join(installed, 'dist/index.js'))).toBe(true);
    expect(existsSync(join(installed, 'dist/index.d.ts'))).toBe(true);
    const shipped = readdirSync(join(installed, 'src'));
    expect(shipped.filter((file) => file.includes('.test') || file === 'testing')).toStrictEqual([]);
    const exports = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { exports: unknown }).exports;
    expect(exports).toMatchObject({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './webhooks': { types: './dist/webhooks/index.d.ts', default: './dist/webhooks/index.js' },
    });
  });

  it('asks for its dependencies by version, as a registry would resolve them', () => {
    for (const name of ['client', 'contract']) {
      const installed = realpathSync(join(consumer, 'node_modules/@org', `plant-${name}`));
      const { version, dependencies = {} } = readManifest(installed);
      expect(version).toBe(readManifest(join(repoRoot, 'packages', name)).version);
      for (const [dependency, range] of Object.entries(dependencies)) {
        // pnpm pack rewrites workspace: and catalog: ranges; a leftover one would fail every install.
        expect(range, `${name} → ${dependency}`).toMatch(/^[\^~]?\d+\.\d+\.\d+$/);
        // Its dependencies sit beside it in the consumer's virtual store (node_modules/.pnpm/…).
        const resolved = readManifest(join(installed, '../..', dependency));
        if (!dependency.startsWith('@org/')) expect(resolved.version).toBe(range.replace(/^[\^~]/, ''));
      }
    }
  });

  it('type-checks a strict TypeScript consumer on Node against them', () => {
    expect(nodeTypeErrors).toBe('');
    expect(existsSync(join(consumer, 'dist/consumer.js'))).toBe(true);
  });

  it('type-checks a browser consumer (DOM types, no @types/node) against them', async () => {
    expect(await typeErrors(consumer, 'tsconfig.browser.json')).toBe('');
  }, 60_000);

  const expectWorks = async (node: string, firstId: number) => {
    const { stdout } = await run(node, ['dist/consumer.js', api?.url ?? '', TOKEN, String(firstId)], {
      cwd: consumer,
      timeout: 30_000,
    });
    const id = String(2n ** 60n + BigInt(firstId));
    expect(JSON.parse(stdout)).toStrictEqual({
      node: expect.any(String),
      created: { name: 'Fern', tag: 'packed' },
      replayed: { name: 'Fern', tag: 'packed' },
      conflict: 409,
      conflictRequestId: 'string',
      readIdExact: true,
      restRead: 200,
      listed: [id],
      gone: 404,
      route: '/plants',
      webhookIdExact: true,
      forgedRefused: 'signature',
    });
    return JSON.parse(stdout) as { node: string };
  };

  it('calls the running API with them', async () => {
    expect((await expectWorks(process.execPath, 1)).node).toBe(process.versions.node);
  }, 60_000);

  it('loads them from CommonJS with require(esm), typed under module node20, on this Node and Node 20', async () => {
    expect(await typeErrors(consumer, 'tsconfig.cjs.json')).toBe('');
    const nodes = [process.execPath, ...((await nodeMajor(NODE_20)) === 20 ? [NODE_20] : [])];
    for (const node of nodes) {
      const { stdout } = await run(node, ['dist/common.cjs'], { cwd: consumer, timeout: 30_000 });
      expect(JSON.parse(stdout), node).toStrictEqual(['function', 'function', 'function']);
    }
  }, 60_000);

  it('calls the running API with them under Node 20', async (context) => {
    const major = await nodeMajor(NODE_20);
    if (major !== 20) {
      context.skip(`no Node 20 at ${NODE_20} (found ${major ?? 'nothing'}); set PLANT_NODE_20 to its path`);
    }
    expect((await expectWorks(NODE_20, 2)).node).toMatch(/^20\./);
  }, 60_000);
});
