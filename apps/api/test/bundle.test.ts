import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectOutput } from '#test/child-output';
import { httpRequest, postPlant } from '#test/http-request';
import { type Exit, logLines } from '#test/main-process';
import { startOtlpReceiver } from '#test/otlp-receiver';
import type { TestDatabase } from '#test/postgres-server';
import { describeWithPostgres, freshDatabase } from '#test/postgres-test-database';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const TOKEN = 'bundle-test-token-0123456789abcdef';

const manifest = (path: string) =>
  JSON.parse(readFileSync(path, 'utf8')) as {
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    scripts?: Record<string, string>;
  };

// Outside the repository, so that Node cannot find any of its node_modules from there.
const scratch = mkdtempSync(join(tmpdir(), 'plant-bundle-test-'));
const bundle = join(scratch, 'plant-api');
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(ROOT, 'scripts', 'bundle.ts'), bundle], {
    cwd: ROOT,
    env: { ...process.env, INIT_CWD: ROOT },
  });
}, 120_000);

// Removing the bundle's node_modules takes seconds on a busy machine.
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

/** `node dist/<entry>` in the bundle, with only the given environment and plain node. */
const runBundled = (entry: string, env: Record<string, string>) => {
  const child = spawn(process.execPath, [join('dist', entry)], {
    cwd: bundle,
    env: { HOME: scratch, HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const { stdout, stderr } = collectOutput(child);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const listening = async (): Promise<string> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const url = logLines(stdout()).find((line) => line.msg === 'plant store listening')?.url;
      if (url !== undefined) return url;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Not listening: ${stdout()}\n${stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { child, exited, listening, output: () => ({ stdout: stdout(), stderr: stderr() }) };
};

const createAndRead = async (url: string) => {
  const created = await postPlant(url, TOKEN, { id: 2n ** 62n, name: 'Shipped', tag: 'bundle' }, { agent: false });
  expect(created.status, created.text).toBe(200);
  const read = await httpRequest(`${url}/plants/${2n ** 62n}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    agent: false,
  });
  expect(read.status).toBe(200);
  expect(read.text).toBe(`{"id":${2n ** 62n},"name":"Shipped","tag":"bundle"}`);
};

/**
 * The bare modules (npm packages, builtins) a built entry loads: with `dynamic`, those its
 * `import()` calls may load too.
 */
const importedPackages = (entry: string, dynamic: boolean): Set<string> => {
  // esbuild writes each static import and re-export at the start of a line.
  const statics = /^(?:import|export)[\s{*"][^;'"]*?"([^"]+)"/gm;
  // Chunks are ./name.js; other quoted import() calls are text in the bundled code.
  const dynamics = /\bimport\("(\.\/[\w-]+\.js|[\w@][\w@/.-]*)"\)/g;
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    const specifiers = [...code.matchAll(statics)].map((match) => match[1] as string);
    if (dynamic) specifiers.push(...[...code.matchAll(dynamics)].map((match) => match[1] as string));
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) visit(join(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(join(bundle, 'dist', entry));
  return packages;
};

describe('pnpm bundle', () => {
  it('holds the built service and its production dependencies, and nothing else', () => {
    const entries = readdirSync(bundle, { recursive: true, withFileTypes: true });
    const paths = entries.map((entry) => relative(bundle, join(entry.parentPath, entry.name)));
    expect(readdirSync(bundle).sort()).toStrictEqual(['dist', 'node_modules', 'package.json']);
    expect(entries.filter((entry) => entry.isSymbolicLink())).toStrictEqual([]);
    for (const entry of ['main.js', 'worker.js', 'migrate.js', 'sqlite-thread.js', 'delivery-thread.js'])
      expect(paths).toContain(join('dist', entry));
    // None of our sources: the service runs from dist, the contract bundled in.
    expect(paths.filter((path) => !path.startsWith('node_modules') && !path.startsWith('dist'))).toStrictEqual([
      'package.json',
    ]);
    expect(paths.filter((path) => path.startsWith('dist') && !/\.js(\.map)?$/.test(path))).toStrictEqual(['dist']);

    const api = manifest(join(ROOT, 'apps', 'api', 'package.json'));
    const devOnly = [
      ...Object.keys(api.devDependencies ?? {}),
      ...Object.keys(manifest(join(ROOT, 'package.json')).devDependencies ?? {}),
    ].filter((name) => !(name in (api.dependencies ?? {})));
    expect(devOnly).toEqual(expect.arrayContaining(['vitest', 'typescript', 'esbuild', '@types/node']));
    for (const name of devOnly) expect(existsSync(join(bundle, 'node_modules', name)), name).toBe(false);
    expect(existsSync(join(bundle, 'node_modules', '@types'))).toBe(false);
    expect(existsSync(join(bundle, 'node_modules', '@org'))).toBe(false);

    const shipped = manifest(join(bundle, 'package.json'));
    expect(shipped.devDependencies).toBeUndefined();
    // Every npm dependency of the service, at the version installed beside it; no workspace links.
    expect(Object.keys(shipped.dependencies ?? {}).sort()).toStrictEqual(
      Object.entries(api.dependencies ?? {})
        .filter(([, spec]) => !spec.startsWith('workspace:'))
        .map(([name]) => name)
        .sort(),
    );
    for (const [name, version] of Object.entries(shipped.dependencies ?? {})) {
      expect(version).toMatch(/^\d+\.\d+\.\d+/);
      expect(manifest(join(bundle, 'node_modules', name, 'package.json'))).toMatchObject({ version });
    }
    expect(shipped.scripts?.start).toMatch(/^node .*dist\/main\.js$/);
    expect(shipped.scripts?.worker).toBe(shipped.scripts?.start?.replace('main.js', 'worker.js'));
  });

  it('turns pretenuring off on the command line of both roles, never at run time (docs/decisions/0007)', () => {
    const { scripts } = manifest(join(bundle, 'package.json'));
    expect(scripts?.start?.split(' ')).toContain('--no-allocation-site-pretenuring');
    expect(scripts?.worker?.split(' ')).toContain('--no-allocation-site-pretenuring');
    const code = readdirSync(join(bundle, 'dist')).filter((file) => file.endsWith('.js'));
    expect(
      code.filter((file) => readFileSync(join(bundle, 'dist', file), 'utf8').includes('setFlagsFromString')),
    ).toStrictEqual([]);
  });

  it('loads pg, jose and OpenTelemetry only when configured: dist/main.js does not import them before it reads the config', () => {
    const everything = importedPackages('main.js', true);
    const configured = ['pg', 'jose', '@opentelemetry/sdk-node', '@opentelemetry/instrumentation-express'];
    for (const name of configured) expect(everything).toContain(name);
    const atStart = importedPackages('main.js', false);
    expect(atStart).toContain('zod');
    for (const name of configured) expect(atStart).not.toContain(name);
  });

  it('sends the spans of a create to the OTLP endpoint, in http/protobuf by default', async () => {
    const otlp = await startOtlpReceiver();
    cleanups.push(() => otlp.close());
    const service = runBundled('main.js', {
      PLANT_API_TOKENS: TOKEN,
      PLANT_DATA_DIR: join(scratch, 'traced'),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
    await createAndRead(await service.listening());
    // Protobuf keeps strings as they are: the route's span (express patched through the loader hook)
    // and the store's span are in the exports.
    const exported = await otlp.waitFor(({ exports }) => {
      const bytes = Buffer.concat(exports.map(({ body }) => body));
      return bytes.includes('request handler - /plants') && bytes.includes('sqlite create') ? exports : undefined;
    });
    expect(new Set(exported.map(({ contentType }) => contentType))).toStrictEqual(new Set(['application/x-protobuf']));
  }, 30_000);

  it('serves the API on the embedded store with plain node, and stops on SIGTERM with exit 0', async () => {
    const dataDir = join(scratch, 'data');
    const service = runBundled('main.js', {
      PLANT_API_TOKENS: TOKEN,
      PLANT_DATA_DIR: dataDir,
      PLANT_SHUTDOWN_DRAIN_MS: '100',
    });
    await createAndRead(await service.listening());
    service.child.kill('SIGTERM');
    expect(await service.exited).toStrictEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'plants.sqlite'))).toBe(true);
  }, 30_000);
});

describeWithPostgres('pnpm bundle on PostgreSQL', () => {
  it('migrates with dist/migrate.js, then serves the API with DATABASE_URL', async () => {
    const database: TestDatabase = await freshDatabase('plant_bundle');
    cleanups.push(() => database.drop());
    const migrate = runBundled('migrate.js', { DATABASE_URL: database.url });
    expect(await migrate.exited, migrate.output().stderr).toStrictEqual({ code: 0, signal: null });
    expect(migrate.output().stdout).toMatch(/^Applied migrations? .*the schema is at version/);

    const service = runBundled('main.js', {
      DATABASE_URL: database.url,
      PLANT_DB_MIGRATE: 'false',
      PLANT_API_TOKENS: TOKEN,
      PLANT_SHUTDOWN_DRAIN_MS: '100',
    });
    await createAndRead(await service.listening());
    service.child.kill('SIGTERM');
    expect(await service.exited).toStrictEqual({ code: 0, signal: null });
  }, 30_000);
});
