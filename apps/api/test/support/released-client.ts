import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * `@org/plant-client` as it was at the last release: the commit that last recorded
 * packages/contract/released/openapi.json (`pnpm version-packages` records it in the release
 * commit), its tree extracted, built and packed as `pnpm publish` would pack it, and installed
 * from the tarballs, so a test can run the client installed out there against today's server.
 */

const REPO = execFileSync('git', ['rev-parse', '--show-toplevel'], {
  cwd: import.meta.dirname,
  encoding: 'utf8',
}).trim();
const BASELINE = 'packages/contract/released/openapi.json';
const PUBLISHED = ['packages/contract', 'packages/client'];
// What the packed packages import: linked from this workspace's install, at the lockfile's versions.
const DEPENDENCIES = ['zod', '@ts-rest/core', 'standardwebhooks'];

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });

export type ReleasedClient = {
  /** The release commit the client was built from. */
  commit: string;
  /** The installed package's entry, for `import()`. */
  entry: string;
  /** Removes everything made here. */
  cleanup(): void;
};

export const installReleasedClient = (): ReleasedClient => {
  // A shallow clone would name its one commit, and the test would run today's client as the old one.
  if (run('git', ['rev-parse', '--is-shallow-repository'], REPO).trim() === 'true') {
    throw new Error('The old-client test needs the git history: run git fetch --unshallow.');
  }
  const commit = run('git', ['log', '-1', '--format=%H', '--', BASELINE], REPO).trim();
  if (commit === '') throw new Error(`No commit records ${BASELINE}: nothing to compare with.`);
  const work = mkdtempSync(join(tmpdir(), 'plant-released-client-'));
  try {
    // The commit's tree, as `git worktree add` would check it out, without registering a worktree in the repository.
    const source = join(work, 'source');
    mkdirSync(source);
    run('sh', ['-c', `git -C "${REPO}" archive ${commit} | tar -x -C "${source}"`], work);
    // Offline when the store has every package of that lockfile, as it does when the lockfile has not changed since.
    run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline', '--filter', '@org/plant-client...'], source);
    run('pnpm', ['--filter', '@org/plant-client...', 'run', 'build'], source);

    const packed = join(work, 'packed');
    for (const dir of PUBLISHED) run('pnpm', ['pack', '--pack-destination', packed], join(source, dir));
    const modules = join(work, 'consumer', 'node_modules');
    for (const tarball of readdirSync(packed)) {
      const name = tarball.startsWith('org-plant-client-') ? '@org/plant-client' : '@org/plant-contract';
      mkdirSync(join(modules, name), { recursive: true });
      run('tar', ['-xzf', join(packed, tarball), '-C', join(modules, name), '--strip-components=1'], work);
    }
    for (const name of DEPENDENCIES) {
      const linked = PUBLISHED.map((dir) => join(REPO, dir, 'node_modules', name)).find((path) => existsSync(path));
      if (linked === undefined) throw new Error(`${name} is not installed in ${PUBLISHED.join(' or ')}.`);
      const installed = realpathSync(linked);
      mkdirSync(dirname(join(modules, name)), { recursive: true });
      symlinkSync(installed, join(modules, name), 'dir');
    }
    const entry = join(modules, '@org/plant-client/dist/index.js');
    if (!existsSync(entry)) throw new Error(`The packed client has no ${entry}.`);
    return { commit, entry: pathToFileURL(entry).href, cleanup: () => rmSync(work, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
};
