/**
 * What the client costs a browser app: dist/index.js bundled with everything it imports (the
 * contract, zod, @ts-rest/core), minified and gzipped. Prints the size and where it comes from, and
 * fails when it is over the budget in size-budget.json.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const packageDir = new URL('..', import.meta.url);
const readJson = (url: URL): unknown => JSON.parse(readFileSync(url, 'utf8'));
const budget = readJson(new URL('size-budget.json', packageDir)) as { maxGzipBytes: number };

// In the workspace the contract exports its TypeScript source; consumers get its published dist.
const contractManifestUrl = new URL(import.meta.resolve('@org/plant-contract/package.json'));
const contractManifest = readJson(contractManifestUrl) as {
  publishConfig: { exports: { '.': { default: string } } };
};
const contractEntry = fileURLToPath(new URL(contractManifest.publishConfig.exports['.'].default, contractManifestUrl));

const result = await build({
  entryPoints: [fileURLToPath(new URL('dist/index.js', packageDir))],
  alias: { '@org/plant-contract': contractEntry },
  bundle: true,
  platform: 'browser',
  format: 'esm',
  target: 'es2022',
  minify: true,
  write: false,
  metafile: true,
  logLevel: 'warning',
});

const [output] = result.outputFiles;
if (!output) throw new Error('esbuild produced no output');
const minified = output.contents.byteLength;
const gzipped = gzipSync(output.contents, { level: 9 }).byteLength;

/** Minified bytes per package (or per file of this workspace). */
const bySource = new Map<string, number>();
for (const meta of Object.values(result.metafile.outputs)) {
  for (const [path, { bytesInOutput }] of Object.entries(meta.inputs)) {
    const source = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path;
    bySource.set(source, (bySource.get(source) ?? 0) + bytesInOutput);
  }
}
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const shares = [...bySource].sort(([, a], [, b]) => b - a).filter(([, bytes]) => bytes >= 200);
for (const [source, bytes] of shares) console.log(`  ${kib(bytes).padStart(9)}  ${source}`);
console.log(
  `@org/plant-client for browsers: ${minified} bytes minified, ${gzipped} bytes gzipped (${kib(gzipped)}); budget ${budget.maxGzipBytes} bytes gzipped.`,
);
if (gzipped > budget.maxGzipBytes) {
  console.error(
    `Over budget by ${gzipped - budget.maxGzipBytes} bytes: shrink the client or, if the growth is worth it, raise maxGzipBytes in packages/client/size-budget.json.`,
  );
  process.exit(1);
}
