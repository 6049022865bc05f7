/**
 * Bundles the service to dist/ as plain JavaScript. Running TypeScript source makes Node strip
 * types at every start (about a quarter of the cold start, measured); production starts from here.
 * npm dependencies stay external; workspace packages (the contract) are bundled in.
 */
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };

rmSync('dist', { recursive: true, force: true });
await build({
  // The SQLite worker runs as its own entry, dist/sqlite-worker.js beside main.js (see sqlite-store.ts).
  entryPoints: [
    { in: 'src/main.ts', out: 'main' },
    { in: 'src/migrate.ts', out: 'migrate' },
    { in: 'src/store/sqlite-worker.ts', out: 'sqlite-worker' },
  ],
  outdir: 'dist',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  external: Object.entries(dependencies)
    .filter(([, version]) => !version.startsWith('workspace:'))
    .map(([name]) => name),
  logLevel: 'warning',
});
