/**
 * Rehearses a release without touching this working tree or the registry. On a snapshot of the
 * working tree in a temporary directory it runs what `pnpm version-packages` runs (with every
 * pending changeset plus one patch changeset for the client alone), checks that the published
 * packages moved to one new version together, that each has a CHANGELOG.md naming its changes,
 * that private packages did not move and that the OpenAPI document, at the new version, is recorded
 * as the released one, then runs `pnpm publish -r --dry-run` and checks that exactly the published
 * packages would go out, the client depending on the contract's new version.
 *
 * Needs the packages built (`pnpm release:dry-run` builds first). KEEP_RELEASE_SNAPSHOT=1 keeps
 * the snapshot for a look.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

type Manifest = { name: string; version: string; private?: boolean; dependencies?: Record<string, string> };

const root = fileURLToPath(new URL('..', import.meta.url));
const publishedDirs = ['packages/contract', 'packages/client'];
const privateDirs = ['apps/api'];
const REHEARSAL_NOTE = 'Release rehearsal: a patch changeset for the client alone.';

const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
const failures: string[] = [];
const check = (ok: boolean, message: string) => {
  if (!ok) failures.push(message);
};

for (const dir of publishedDirs) {
  if (!existsSync(join(root, dir, 'dist/index.js'))) throw new Error(`${dir}/dist is missing: run pnpm build first.`);
}

// The snapshot: every file git would see (tracked, or new and not ignored) and the built dist.
const snapshot = mkdtempSync(join(tmpdir(), 'plant-release-'));
const files = run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root).split('\0');
for (const file of files.filter((file) => file !== '' && existsSync(join(root, file)))) {
  mkdirSync(dirname(join(snapshot, file)), { recursive: true });
  cpSync(join(root, file), join(snapshot, file));
}
for (const dir of publishedDirs) cpSync(join(root, dir, 'dist'), join(snapshot, dir, 'dist'), { recursive: true });

// Only the links these two commands need, so that nothing can write into the real node_modules:
// the changelog generator that .changeset/config.json names, and workspace dependencies.
const link = (target: string, at: string) => {
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at);
};
const changesetsCli = dirname(createRequire(import.meta.url).resolve('@changesets/cli/package.json'));
link(changesetsCli, join(snapshot, 'node_modules/@changesets/cli'));
const dirByName = new Map(publishedDirs.map((dir) => [readManifest(join(root, dir)).name, dir]));
for (const dir of publishedDirs) {
  for (const [name, spec] of Object.entries(readManifest(join(root, dir)).dependencies ?? {})) {
    const target = dirByName.get(name);
    if (spec.startsWith('workspace:') && target) {
      link(
        relative(join(snapshot, dir, 'node_modules', dirname(name)), join(snapshot, target)),
        join(snapshot, dir, 'node_modules', name),
      );
    }
  }
}

const changesetDir = join(snapshot, '.changeset');
const changesetCount = () =>
  readdirSync(changesetDir).filter((file) => file.endsWith('.md') && file !== 'README.md').length;
const pending = readdirSync(changesetDir)
  .filter((file) => file.endsWith('.md') && file !== 'README.md')
  .map((file) => readFileSync(join(changesetDir, file), 'utf8'));
const versionOf = (dir: string) => readManifest(join(snapshot, dir)).version;
const changelogOf = (dir: string) => {
  const file = join(snapshot, dir, 'CHANGELOG.md');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};
const initial = new Map([...publishedDirs, ...privateDirs].map((dir) => [dir, versionOf(dir)]));

// What the contract's document scripts import.
for (const name of ['zod', '@ts-rest/core']) {
  link(
    realpathSync(join(root, 'packages/contract/node_modules', name)),
    join(snapshot, 'packages/contract/node_modules', name),
  );
}
const contractScript = (name: string) =>
  run(process.execPath, [join('scripts', name)], join(snapshot, 'packages/contract'));
const documentOf = (path: string) => readFileSync(join(snapshot, 'packages/contract', path), 'utf8');

/**
 * `pnpm version-packages` (`changeset version`, the document with its new version, recorded as the
 * released one), then: one new version for the published packages, private ones unmoved, and the
 * document of that version recorded as the baseline of `pnpm api:check`.
 */
const versionPackages = (stage: string): string => {
  const before = new Map(publishedDirs.map((dir) => [dir, versionOf(dir)]));
  run(process.execPath, [join(changesetsCli, 'bin.js'), 'version'], snapshot);
  contractScript('write-openapi.ts');
  contractScript('record-released-openapi.ts');
  const versions = new Set(publishedDirs.map(versionOf));
  const [version = ''] = versions;
  check(versions.size === 1, `${stage}: published packages on different versions: ${[...versions].join(', ')}`);
  for (const dir of publishedDirs) {
    check(versionOf(dir) !== before.get(dir), `${stage}: ${dir} was not bumped from ${before.get(dir)}`);
    check(changelogOf(dir).includes(`## ${version}\n`), `${stage}: ${dir}/CHANGELOG.md has no "## ${version}" section`);
  }
  for (const dir of privateDirs) {
    check(versionOf(dir) === initial.get(dir), `${stage}: private ${dir} was versioned`);
    check(!existsSync(join(snapshot, dir, 'CHANGELOG.md')), `${stage}: private ${dir} got a CHANGELOG.md`);
  }
  check(changesetCount() === 0, `${stage}: changesets were left in .changeset/`);
  const documentVersion = (JSON.parse(documentOf('openapi.json')) as { info: { version: string } }).info.version;
  check(documentVersion === version, `${stage}: openapi.json has info.version ${documentVersion}, not ${version}`);
  check(
    documentOf('released/openapi.json') === documentOf('openapi.json'),
    `${stage}: released/openapi.json is not the document of ${version}`,
  );
  return version;
};

// Stage 1, the pending changesets: each package's CHANGELOG.md quotes every one that names it.
if (pending.length > 0) {
  versionPackages('pending changesets');
  const firstLine = (changeset: string) => changeset.split('---')[2]?.trim().split('\n')[0] ?? '';
  for (const dir of publishedDirs) {
    const name = readManifest(join(snapshot, dir)).name;
    for (const changeset of pending.filter((text) => text.split('---')[1]?.includes(`"${name}"`))) {
      check(changelogOf(dir).includes(firstLine(changeset)), `${dir}/CHANGELOG.md lacks "${firstLine(changeset)}"`);
    }
  }
}

// Stage 2, a patch for the client alone: the contract must move with it (`fixed` in the config).
writeFileSync(
  join(changesetDir, 'release-rehearsal.md'),
  `---\n"@org/plant-client": patch\n---\n\n${REHEARSAL_NOTE}\n`,
);
const version = versionPackages('client-only patch');
check(changelogOf('packages/client').includes(REHEARSAL_NOTE), 'the client CHANGELOG.md lacks the rehearsal note');

// What would be published: the two packages at the new version, nothing private.
const publishLog = run('pnpm', ['publish', '-r', '--dry-run', '--no-git-checks'], snapshot);
const wouldPublish = [...publishLog.matchAll(/^\+ (\S+)$/gm)].map(([, spec]) => spec).sort();
const expected = publishedDirs.map((dir) => `${readManifest(join(snapshot, dir)).name}@${version}`).sort();
check(
  JSON.stringify(wouldPublish) === JSON.stringify(expected),
  `pnpm publish -r --dry-run would publish [${wouldPublish.join(', ')}], not [${expected.join(', ')}]`,
);

// The client as packed asks for the contract's new version.
const packed = join(snapshot, '.packed');
run('pnpm', ['pack', '--pack-destination', packed], join(snapshot, 'packages/client'));
const [tarball = ''] = readdirSync(packed);
const packedManifest = JSON.parse(
  run('tar', ['-xOzf', join(packed, tarball), 'package/package.json'], snapshot),
) as Manifest;
const contractRange = packedManifest.dependencies?.['@org/plant-contract'];
check(
  contractRange === `^${version}`,
  `the packed client depends on @org/plant-contract ${contractRange}, not ^${version}`,
);

if (process.env.KEEP_RELEASE_SNAPSHOT) console.log(`snapshot kept in ${snapshot}`);
else rmSync(snapshot, { recursive: true, force: true });

if (failures.length > 0) {
  console.error(`Release dry run failed:\n${failures.map((failure) => `- ${failure}`).join('\n')}`);
  process.exit(1);
}
console.log(
  `Release dry run: changeset version took ${pending.length} pending changeset(s), then a client-only patch, ` +
    `moving both packages together from ${initial.get('packages/client')} to ${version} with a CHANGELOG.md each ` +
    `(${privateDirs.join(', ')} unmoved); pnpm publish -r --dry-run would publish exactly ${expected.join(' and ')}.`,
);
