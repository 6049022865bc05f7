/**
 * `node scripts/tool-versions.ts <command…>`: runs the command with PLANT_TOOL_VERSIONS naming the
 * versions of the programs the test suites use from outside the repository: this Node, Node 20 at
 * /usr/bin/node (the client's oldest), PostgreSQL and Chromium. turbo.json hashes the variable into
 * the test tasks, so a cached test result is replayed only on the same tools; `pnpm test` runs
 * turbo through this.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const versionOf = (command: string, args = ['--version']): string => {
  if (!existsSync(command)) return 'none';
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'none';
  }
};

// The newest PostgreSQL installed, as the test server picks it (apps/api/test/support/postgres-server.ts).
const postgresBin = (): string => {
  if (process.env.PLANT_TEST_POSTGRES_BIN) return join(process.env.PLANT_TEST_POSTGRES_BIN, 'postgres');
  const root = '/usr/lib/postgresql';
  const newest = existsSync(root)
    ? readdirSync(root)
        .filter((entry) => Number.isFinite(Number(entry)))
        .sort((a, b) => Number(b) - Number(a))[0]
    : undefined;
  return newest === undefined ? '/usr/local/pgsql/bin/postgres' : join(root, newest, 'bin', 'postgres');
};

const versions = [
  `node ${process.version}`,
  `node20 ${versionOf(process.env.PLANT_NODE_20 ?? '/usr/bin/node')}`,
  versionOf(postgresBin()),
  versionOf('/usr/bin/chromium'),
].join('; ');

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  console.log(versions);
  process.exit(0);
}
const { status, signal } = spawnSync(command, args, {
  stdio: 'inherit',
  env: { ...process.env, PLANT_TOOL_VERSIONS: versions },
});
process.exit(status ?? (signal ? 1 : 0));
