/**
 * Bundles the service to dist/ (or the directory given, under apps/api so that it finds the
 * dependencies: tests build their own copy) as plain JavaScript. Running TypeScript source makes
 * Node strip types at every start (about a quarter of the cold start, measured); production starts
 * from here. npm dependencies stay external, imported as ES modules at run time (which is also
 * what lets OpenTelemetry's loader hook patch express, pg and pino); workspace packages (the
 * contract) are bundled in.
 */
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> };

const outdir = process.argv[2] ?? 'dist';
rmSync(outdir, { recursive: true, force: true });
await build({
  // The SQLite thread and the delivery thread run as entries of their own, dist/sqlite-thread.js and
  // dist/delivery-thread.js beside main.js (see store/sqlite/sqlite-store.ts and delivery-thread-parent.ts).
  entryPoints: [
    { in: 'src/main.ts', out: 'main' },
    { in: 'src/worker.ts', out: 'worker' },
    { in: 'src/migrate.ts', out: 'migrate' },
    { in: 'src/store/sqlite/thread.ts', out: 'sqlite-thread' },
    { in: 'src/webhooks/delivery/delivery-thread.ts', out: 'delivery-thread' },
  ],
  outdir,
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
