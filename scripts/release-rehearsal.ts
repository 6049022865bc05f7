/**
 * Rehearses a release against a real registry, without touching this working tree or any public
 * registry:
 *
 * 1. On a snapshot of the working tree in a temporary directory, with every pending changeset plus
 *    a patch for the client alone: `changeset version` on a copy (the first release is 1.0.0, the
 *    version the document states; a later one moves up), then `changeset version --snapshot`: the
 *    published packages move to one new version together (`fixed`), each CHANGELOG.md quotes its
 *    changes, private ones stay.
 * 2. Verdaccio on a loopback port, with no uplinks: it holds only what is published to it.
 *    `pnpm publish -r` publishes exactly @org/plant-contract and @org/plant-client to it.
 * 3. A consumer project outside the workspace installs @org/plant-client at that version, with
 *    the @org scope on that registry only, type-checks a strict TypeScript program using it
 *    (release-rehearsal/consumer.ts) and runs it against the built API started here: create, get,
 *    list, typed errors, and verifyPlantWebhook on a delivery the service really sent.
 *
 * Needs everything built (`pnpm release:rehearsal` builds first). KEEP_RELEASE_REHEARSAL=1 keeps
 * the temporary directory for a look.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from '../apps/api/test/support/free-port.ts';
import { linkDir, strictConsumerTsconfig } from '../packages/client/src/testing/consumer-project.ts';
import { FIRST_RELEASE } from '../packages/contract/scripts/interface-version.ts';

type Manifest = {
  name: string;
  dist?: { integrity?: string };
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  bin?: string | Record<string, string>;
};
type Document = { info: { version: string } };

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const publishedDirs = ['packages/contract', 'packages/client'];
const privateDirs = ['apps/api'];
const REHEARSAL_NOTE = 'Release rehearsal: a patch changeset for the client alone.';
const TOKEN = 'release-rehearsal-token-0123456789';
const STEP_TIMEOUT_MS = 180_000;

const run = async (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) => {
  const { stdout } = await promisify(execFile)(command, args, {
    cwd,
    env,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: STEP_TIMEOUT_MS,
  }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(
      `${command} ${args.join(' ')} failed in ${cwd}:\n${error.stdout ?? ''}${error.stderr ?? error.message}`,
    );
  });
  return stdout;
};
const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
const failures: string[] = [];
const check = (ok: boolean, message: string) => {
  if (!ok) failures.push(message);
};

for (const dir of [...publishedDirs, ...privateDirs]) {
  if (!existsSync(join(root, dir, 'dist'))) throw new Error(`${dir}/dist is missing: run pnpm build first.`);
}

const work = mkdtempSync(join(tmpdir(), 'plant-release-'));
const children: ChildProcess[] = [];
const stopChildren = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
};
process.on('exit', stopChildren);

/**
 * Starts `node <args>` and waits until `ready` (given what it printed so far) yields a value,
 * checking every 100 ms; fails if it exits first or takes more than a minute.
 */
const startNode = async <T>(
  what: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: (output: string) => Promise<T | undefined>,
): Promise<T> => {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await ready(output);
    if (value !== undefined) return value;
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}) before it was ready:\n${output}`);
    if (Date.now() > deadline) throw new Error(`${what} was not ready within 60 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

try {
  // 1. The snapshot: every file git would see (tracked, or new and not ignored) and the built dist.
  const snapshot = join(work, 'repo');
  const files = (await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], root)).split('\0');
  for (const file of files.filter((file) => file !== '' && existsSync(join(root, file)))) {
    mkdirSync(dirname(join(snapshot, file)), { recursive: true });
    cpSync(join(root, file), join(snapshot, file));
  }
  for (const dir of publishedDirs) cpSync(join(root, dir, 'dist'), join(snapshot, dir, 'dist'), { recursive: true });

  // Only the links these commands need, so that nothing can write into the real node_modules:
  // the changelog generator that .changeset/config.json names, and workspace dependencies.
  const changesetsCli = dirname(require.resolve('@changesets/cli/package.json'));
  linkDir(changesetsCli, join(snapshot, 'node_modules/@changesets/cli'));
  const dirByName = new Map(publishedDirs.map((dir) => [readManifest(join(root, dir)).name, dir]));
  for (const dir of publishedDirs) {
    for (const [name, spec] of Object.entries(readManifest(join(root, dir)).dependencies ?? {})) {
      const target = dirByName.get(name);
      if (spec.startsWith('workspace:') && target) {
        linkDir(
          relative(join(snapshot, dir, 'node_modules', dirname(name)), join(snapshot, target)),
          join(snapshot, dir, 'node_modules', name),
        );
      }
    }
  }

  const changesetDir = join(snapshot, '.changeset');
  const pending = readdirSync(changesetDir)
    .filter((file) => file.endsWith('.md') && file !== 'README.md')
    .map((file) => readFileSync(join(changesetDir, file), 'utf8'));
  writeFileSync(
    join(changesetDir, 'release-rehearsal.md'),
    `---\n"@org/plant-client": patch\n---\n\n${REHEARSAL_NOTE}\n`,
  );
  const versionOf = (dir: string) => readManifest(join(snapshot, dir)).version;
  const changelogOf = (dir: string) => {
    const file = join(snapshot, dir, 'CHANGELOG.md');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  };
  const initial = new Map([...publishedDirs, ...privateDirs].map((dir) => [dir, versionOf(dir)]));

  // The release itself, as `pnpm version-packages` would version it, on a copy: the first release
  // (no CHANGELOG.md yet) must publish the interface's first version, which the document states
  // already; a later one must move up.
  const release = join(work, 'release');
  cpSync(snapshot, release, { recursive: true, verbatimSymlinks: true });
  await run(process.execPath, [join(changesetsCli, 'bin.js'), 'version'], release);
  const releaseVersions = new Set(publishedDirs.map((dir) => readManifest(join(release, dir)).version));
  const [releaseVersion = ''] = releaseVersions;
  check(
    releaseVersions.size === 1,
    `the release puts the packages on different versions: ${[...releaseVersions].join(', ')}`,
  );
  if (publishedDirs.every((dir) => changelogOf(dir) === '')) {
    const stated = (JSON.parse(readFileSync(join(snapshot, 'packages/contract/openapi.json'), 'utf8')) as Document).info
      .version;
    check(
      releaseVersion === FIRST_RELEASE && stated === FIRST_RELEASE,
      `the first release would be ${releaseVersion} with a document of ${stated}, not ${FIRST_RELEASE}`,
    );
  } else {
    const before = initial.get('packages/contract') ?? '';
    check(
      releaseVersion.localeCompare(before, 'en', { numeric: true }) > 0,
      `the release would be ${releaseVersion}, not above ${before}`,
    );
  }

  await run(process.execPath, [join(changesetsCli, 'bin.js'), 'version', '--snapshot', 'rehearsal'], snapshot);
  // What `pnpm version-packages` runs next: the OpenAPI document at the new version, recorded as the
  // released one (the baseline of `pnpm api:check`). Its scripts import zod and @ts-rest/core.
  for (const name of ['zod', '@ts-rest/core']) {
    linkDir(
      realpathSync(join(root, 'packages/contract/node_modules', name)),
      join(snapshot, 'packages/contract/node_modules', name),
    );
  }
  for (const script of ['write-openapi.ts', 'record-released-openapi.ts']) {
    await run(process.execPath, [join('scripts', script)], join(snapshot, 'packages/contract'));
  }
  const documentOf = (path: string) => readFileSync(join(snapshot, 'packages/contract', path), 'utf8');

  const versions = new Set(publishedDirs.map(versionOf));
  const [version = ''] = versions;
  check(versions.size === 1, `published packages on different versions: ${[...versions].join(', ')}`);
  check(/-rehearsal-/.test(version), `the snapshot version ${version} does not name the rehearsal`);
  const documentVersion = (JSON.parse(documentOf('openapi.json')) as Document).info.version;
  check(documentVersion === version, `openapi.json has info.version ${documentVersion}, not ${version}`);
  check(
    documentOf('released/openapi.json') === documentOf('openapi.json'),
    `released/openapi.json is not the document of ${version}`,
  );
  for (const dir of publishedDirs) {
    check(versionOf(dir) !== initial.get(dir), `${dir} was not bumped from ${initial.get(dir)}`);
    check(changelogOf(dir).includes(`## ${version}\n`), `${dir}/CHANGELOG.md has no "## ${version}" section`);
    const name = readManifest(join(snapshot, dir)).name;
    const firstLine = (changeset: string) => changeset.split('---')[2]?.trim().split('\n')[0] ?? '';
    for (const changeset of pending.filter((text) => text.split('---')[1]?.includes(`"${name}"`))) {
      check(changelogOf(dir).includes(firstLine(changeset)), `${dir}/CHANGELOG.md lacks "${firstLine(changeset)}"`);
    }
  }
  check(changelogOf('packages/client').includes(REHEARSAL_NOTE), 'the client CHANGELOG.md lacks the rehearsal note');
  for (const dir of privateDirs) {
    check(versionOf(dir) === initial.get(dir), `private ${dir} was versioned`);
    check(!existsSync(join(snapshot, dir, 'CHANGELOG.md')), `private ${dir} got a CHANGELOG.md`);
  }

  // 2. The registry: Verdaccio, no uplinks, one user whose token publishes.
  const registryPort = await freePort();
  const registry = `http://127.0.0.1:${registryPort}/`;
  const registryDir = join(work, 'registry');
  mkdirSync(registryDir);
  writeFileSync(
    join(registryDir, 'config.yaml'),
    [
      `storage: ${join(registryDir, 'storage')}`,
      'auth:',
      '  htpasswd:',
      `    file: ${join(registryDir, 'htpasswd')}`,
      '    max_users: 1',
      'uplinks: {}',
      'packages:',
      "  '**':",
      '    access: $all',
      '    publish: $authenticated',
      'log: { type: stdout, format: json, level: warn }',
      '',
    ].join('\n'),
  );
  const verdaccio = dirname(require.resolve('verdaccio/package.json'));
  // It logs nothing at this level when all is well: readiness is its ping.
  await startNode(
    'Verdaccio',
    [
      join(verdaccio, readManifest(verdaccio).bin as string),
      '--config',
      join(registryDir, 'config.yaml'),
      '--listen',
      `127.0.0.1:${registryPort}`,
    ],
    { PATH: process.env.PATH, HOME: work },
    () =>
      fetch(`${registry}-/ping`).then(
        (answer) => (answer.ok ? true : undefined),
        () => undefined,
      ),
  );
  const user = await fetch(`${registry}-/user/org.couchdb.user:rehearsal`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'rehearsal', password: `rehearsal-${process.pid}-${Date.now()}` }),
  });
  const { token } = (await user.json()) as { token?: string };
  if (!token) throw new Error(`Verdaccio refused the rehearsal user (${user.status}).`);
  const registryAuth = `//127.0.0.1:${registryPort}/:_authToken=${token}\n`;
  writeFileSync(join(snapshot, '.npmrc'), `${readFileSync(join(snapshot, '.npmrc'), 'utf8')}\n${registryAuth}`);

  // A prerelease goes out under a tag of its own, as `changeset publish --tag` would put it.
  const publishEnv = { ...process.env, NPM_CONFIG_PROVENANCE: 'false' };
  await run(
    'pnpm',
    ['publish', '-r', '--no-git-checks', '--tag', 'rehearsal', '--registry', registry],
    snapshot,
    publishEnv,
  );
  type Packument = {
    'dist-tags': Record<string, string>;
    versions: Record<string, Manifest>;
  };
  const packument = async (name: string): Promise<Packument | undefined> => {
    const answer = await fetch(`${registry}${name.replace('/', '%2f')}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return answer.ok ? ((await answer.json()) as Packument) : undefined;
  };
  const expected = publishedDirs.map((dir) => readManifest(join(snapshot, dir)).name);
  for (const name of [...expected, readManifest(join(snapshot, 'apps/api')).name]) {
    const published = await packument(name);
    if (expected.includes(name)) {
      check(
        JSON.stringify(Object.keys(published?.versions ?? {})) === JSON.stringify([version]),
        `the registry has ${name} at [${Object.keys(published?.versions ?? {}).join(', ')}], not [${version}]`,
      );
      check(published?.['dist-tags'].rehearsal === version, `${name}@rehearsal is not ${version}`);
    } else {
      check(published === undefined, `private ${name} was published`);
    }
  }
  const contractRange = (await packument('@org/plant-client'))?.versions[version]?.dependencies?.[
    '@org/plant-contract'
  ];
  check(
    contractRange === `^${version}`,
    `the published client asks for @org/plant-contract ${contractRange}, not ^${version}`,
  );

  // 3. The consumer: outside the workspace, @org from the rehearsal registry only.
  const consumer = join(work, 'consumer');
  mkdirSync(consumer);
  const catalogVersion = (name: string) =>
    new RegExp(`^\\s+"?${name.replace('/', '\\/')}"?:\\s*(\\S+)`, 'm').exec(
      readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8'),
    )?.[1] ?? 'latest';
  writeFileSync(join(consumer, '.npmrc'), `@org:registry=${registry}\n${registryAuth}`);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify(
      {
        name: 'plant-consumer',
        private: true,
        type: 'module',
        dependencies: { '@org/plant-client': version },
        devDependencies: { '@types/node': catalogVersion('@types/node') },
      },
      null,
      2,
    ),
  );
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(strictConsumerTsconfig));
  copyFileSync(join(root, 'scripts/release-rehearsal/consumer.ts'), join(consumer, 'consumer.ts'));
  // Packages from the public registry come from this machine's cache where it has them.
  await run('pnpm', ['install', '--prefer-offline', '--no-frozen-lockfile'], consumer);
  // What was installed is what was published there: the lockfile records the registry's integrity.
  const lockfile = readFileSync(join(consumer, 'pnpm-lock.yaml'), 'utf8');
  for (const name of expected) {
    const integrity = (await packument(name))?.versions[version]?.dist?.integrity ?? '';
    check(
      integrity !== '' && lockfile.includes(`'${name}@${version}':\n    resolution: {integrity: ${integrity}}`),
      `the consumer did not install ${name}@${version} as the rehearsal registry holds it (${integrity})`,
    );
  }
  const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin/tsc');
  await run(process.execPath, [tsc, '-p', '.'], consumer);

  // The API as built, on a fresh data directory; loopback webhook receivers allowed.
  const apiUrl = await startNode(
    'The API',
    [join(root, 'apps/api/dist/main.js')],
    {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      PLANT_API_TOKENS: TOKEN,
      PLANT_DATA_DIR: join(work, 'data'),
      PLANT_WEBHOOKS_ALLOW_PRIVATE: 'true',
    },
    async (output) =>
      output
        .split('\n')
        .flatMap((line) => {
          try {
            return [JSON.parse(line) as { msg?: string; url?: string }];
          } catch {
            return [];
          }
        })
        .find((line) => line.msg === 'plant store listening')?.url,
  );
  const seen = JSON.parse(await run(process.execPath, ['dist/consumer.js', apiUrl, TOKEN], consumer)) as unknown;
  const id = String(2n ** 62n + 7n);
  const wanted = {
    created: { name: 'Fern', tag: 'rehearsal' },
    readIdExact: true,
    listed: [id],
    conflict: 409,
    missing: 404,
    webhook: { id, name: 'Fern', exact: true },
    forgedRefused: 'signature',
  };
  check(
    JSON.stringify(seen) === JSON.stringify(wanted),
    `the consumer saw ${JSON.stringify(seen)}, not ${JSON.stringify(wanted)}`,
  );

  if (failures.length > 0) {
    console.error(`Release rehearsal failed:\n${failures.map((failure) => `- ${failure}`).join('\n')}`);
    process.exitCode = 1;
  } else {
    console.log(
      `Release rehearsal: changeset version would release ${releaseVersion}; ` +
        `changeset version --snapshot took ${pending.length} pending changeset(s) and a client-only ` +
        `patch to ${version} for both packages, each with a CHANGELOG.md (${privateDirs.join(', ')} unmoved); ` +
        `pnpm publish -r put exactly ${expected.join(' and ')} on a Verdaccio registry; a consumer installed ` +
        '@org/plant-client from it, type-checked against it, and created, read and listed a plant, got a 409 ' +
        'and a 404 as typed errors, and verified the webhook delivery for its plant.',
    );
  }
} finally {
  stopChildren();
  if (process.env.KEEP_RELEASE_REHEARSAL) console.log(`kept in ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
