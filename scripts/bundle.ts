/**
 * `pnpm bundle <dir>`: the service as a folder to ship, runnable with Node alone.
 *
 *   <dir>/dist/           the service built by apps/api/scripts/build.ts (workspace packages bundled in)
 *   <dir>/node_modules/   its npm dependencies, production only, flat (no symlinks), from `pnpm deploy --prod`
 *   <dir>/package.json    `npm start` / `npm run worker` / `npm run migrate`, and the exact dependency versions inside
 *
 * The dependency list is read from apps/api/package.json at every run, so that a dependency added
 * there is shipped without touching this script.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

type Manifest = {
  name: string;
  version: string;
  description?: string;
  engines?: Record<string, string>;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
};

const API = '@org/plant-api';
const root = resolve(import.meta.dirname, '..');
const apiDir = join(root, 'apps', 'api');

const fail = (message: string): never => {
  console.error(message);
  process.exit(1);
};

const [dirArgument] = process.argv.slice(2);
if (dirArgument === undefined) fail('usage: pnpm bundle <dir>   (an empty or new directory)');
// pnpm runs scripts from the repository root; the directory is meant from where the command was typed.
const target = resolve(process.env.INIT_CWD ?? process.cwd(), dirArgument as string);
if (existsSync(target) && readdirSync(target).length > 0)
  fail(`${target} is not empty; give an empty or new directory.`);
if (!relative(root, target).startsWith('..'))
  fail(`${target} is inside the repository; bundle to a directory outside it.`);

const run = (args: string[]) => execFileSync('pnpm', args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });

const api = JSON.parse(readFileSync(join(apiDir, 'package.json'), 'utf8')) as Manifest;
const dependencies = Object.entries(api.dependencies ?? {});
// Bundled into dist by build.ts, so not shipped as packages.
const workspacePackages = new Set(
  dependencies.filter(([, spec]) => spec.startsWith('workspace:')).map(([name]) => name),
);

run(['--filter', API, 'build']);

const staging = mkdtempSync(join(tmpdir(), 'plant-bundle-'));
try {
  const deployed = join(staging, 'deploy');
  // --legacy: pnpm 10 deploys a workspace without inject-workspace-packages only so. A hoisted
  // node_modules is a plain folder tree, with no symlinks to lose when it is archived or copied;
  // optional peers (@types/node for @ts-rest/core) are not pulled in from the workspace root.
  run([
    '--filter',
    API,
    '--prod',
    'deploy',
    '--legacy',
    '--prefer-offline',
    '--config.node-linker=hoisted',
    '--config.auto-install-peers=false',
    '--config.resolve-peers-from-workspace-root=false',
    deployed,
  ]);

  mkdirSync(target, { recursive: true });
  cpSync(join(apiDir, 'dist'), join(target, 'dist'), { recursive: true });
  const modules = join(deployed, 'node_modules');
  cpSync(modules, join(target, 'node_modules'), {
    recursive: true,
    filter: (source) => {
      const path = relative(modules, source);
      // pnpm's own bookkeeping and command links; no one runs them in production. Type declarations
      // (@types/pg comes as a dependency of @opentelemetry/instrumentation-pg) are never loaded.
      if (['.bin', '.pnpm', '.modules.yaml', '@types'].includes(path.split('/')[0] ?? '')) return false;
      return !workspacePackages.has(path);
    },
  });

  // A scope whose packages were all left out (@org) stays behind empty.
  for (const scope of readdirSync(join(target, 'node_modules'))) {
    const dir = join(target, 'node_modules', scope);
    if (scope.startsWith('@') && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
  }

  const installedVersion = (name: string): string =>
    (JSON.parse(readFileSync(join(target, 'node_modules', name, 'package.json'), 'utf8')) as Manifest).version;
  const start = api.scripts?.start ?? 'node dist/main.js';
  const manifest: Manifest & Record<string, unknown> = {
    name: api.name,
    version: api.version,
    private: true,
    description: api.description,
    type: 'module',
    engines: api.engines,
    // The webhook worker role runs with the service's Node flags.
    scripts: { start, worker: start.replace(/dist\/main\.js$/, 'dist/worker.js'), migrate: 'node dist/migrate.js' },
    dependencies: Object.fromEntries(
      dependencies.filter(([name]) => !workspacePackages.has(name)).map(([name]) => [name, installedVersion(name)]),
    ),
  };
  writeFileSync(join(target, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  // What makes the folder self-contained: nothing in it may point elsewhere.
  for (const entry of readdirSync(target, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) fail(`Unexpected symbolic link in the bundle: ${join(entry.parentPath, entry.name)}`);
  }
  const bytes = readdirSync(target, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + lstatSync(join(entry.parentPath, entry.name)).size, 0);
  console.log(
    `Bundled ${API} into ${target} (${(bytes / 2 ** 20).toFixed(1)} MiB, ${Object.keys(manifest.dependencies ?? {}).length} direct dependencies). Run it with: cd ${target} && npm start`,
  );
} finally {
  rmSync(staging, { recursive: true, force: true });
}
