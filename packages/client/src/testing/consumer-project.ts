/**
 * What the tests of the packed packages share: the real API started as a process, the two packages
 * packed as `pnpm publish` would, and tsc run over a consumer's project.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const run = promisify(execFile);
const require = createRequire(import.meta.url);
export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const packageDirs = ['contract', 'client'].map((name) => join(repoRoot, 'packages', name));
export const clientDir = join(repoRoot, 'packages', 'client');

/** Where this workspace installed `name` for the client: the version its lockfile pins. */
export const installedForClient = (name: string): string => realpathSync(join(clientDir, 'node_modules', name));

export type Manifest = {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
export const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** Fails at once, with what to do, when the packages were not built. */
export const expectBuilt = (): void => {
  for (const dir of packageDirs) {
    if (!existsSync(join(dir, 'dist/index.js'))) {
      throw new Error(`${dir}/dist is missing: run \`pnpm build\` first (\`pnpm test\` builds before this test).`);
    }
  }
};

/** Packs the contract and the client into `destination`; the tarball of each, by short name. */
export const packPackages = async (destination: string): Promise<{ contract: string; client: string }> => {
  await Promise.all(packageDirs.map((dir) => run('pnpm', ['pack', '--pack-destination', destination], { cwd: dir })));
  const tarball = (name: string) => {
    const file = readdirSync(destination).find((entry) => entry.startsWith(`org-plant-${name}-`));
    if (!file) throw new Error(`no tarball for ${name} in ${destination}`);
    return join(destination, file);
  };
  return { contract: tarball('contract'), client: tarball('client') };
};

export type Api = { url: string; token: string; process: ChildProcess; stop: () => Promise<void> };

/** The real service (`apps/api/src/main.ts`) on an ephemeral port with a fresh data directory. */
export const startApi = (dataDir: string, token: string): Promise<Api> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'apps/api/src/main.ts')], {
      env: {
        PATH: process.env.PATH,
        PORT: '0',
        HOST: '127.0.0.1',
        PLANT_API_TOKENS: token,
        PLANT_DATA_DIR: dataDir,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stop = async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
    };
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk;
      const url =
        /"msg":"plant store listening".*?"url":"([^"]+)"|"url":"([^"]+)".*?"msg":"plant store listening"/.exec(output);
      if (url) resolve({ url: (url[1] ?? url[2]) as string, token, process: child, stop });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the API exited (${code}) before listening:\n${output}`)));
  });

/** tsc's complaints about a project of the consumer (emitting what it emits); empty when it type-checks. */
export const typeErrors = async (cwd: string, project: string): Promise<string> => {
  const tsc = join(require.resolve('typescript/package.json'), '../bin/tsc');
  return run(process.execPath, [tsc, '-p', project], { cwd }).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string; message: string }) => error.stdout || error.message,
  );
};

/**
 * Waits for every step of a set-up, then throws the first failure: a step that did start something
 * (an API process) is then known to afterAll, which stops it.
 */
export const settleAll = async (steps: Promise<unknown>[]): Promise<void> => {
  const failed = (await Promise.allSettled(steps)).find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
};

/** What every consumer project here is checked under: strict, with the libraries' own types checked too. */
export const STRICT_CHECKS = { target: 'es2022', strict: true, skipLibCheck: false } as const;

/** The standard library a project gets with the DOM's types (browser globals, or msw's types of them). */
export const DOM_LIB = ['es2022', 'dom', 'dom.iterable'];

/** Links the directory `at` to `target`, making its parent first. */
export const linkDir = (target: string, at: string): void => {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
};

/** A strict Node consumer's tsconfig.json over consumer.ts: nodenext, the libraries' types checked too. */
export const strictConsumerTsconfig = {
  compilerOptions: {
    ...STRICT_CHECKS,
    lib: ['es2022'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: ['node'],
    outDir: 'dist',
  },
  include: ['consumer.ts'],
};
