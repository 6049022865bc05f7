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
  // The SQLite worker and the delivery thread run as entries of their own, dist/sqlite-worker.js and
  // dist/delivery-thread.js beside main.js (see sqlite-store.ts and threaded-delivery.ts).
  entryPoints: [
    { in: 'src/main.ts', out: 'main' },
    { in: 'src/worker.ts', out: 'worker' },
    { in: 'src/migrate.ts', out: 'migrate' },
    { in: 'src/store/sqlite-worker.ts', out: 'sqlite-worker' },
    { in: 'src/webhooks/delivery-thread.ts', out: 'delivery-thread' },
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
