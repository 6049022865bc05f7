/**
 * Writes the interface's version (from package.json, see interface-version.ts) to src/version.ts
 * and the OpenAPI document to packages/contract/openapi.json (`pnpm --filter @org/plant-contract openapi`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { interfaceVersion } from './interface-version.ts';

const file = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const version = interfaceVersion(
  (JSON.parse(readFileSync(file('../package.json'), 'utf8')) as { version: string }).version,
);
const versionModule = file('../src/version.ts');
const versionSource = readFileSync(versionModule, 'utf8');
writeFileSync(versionModule, versionSource.replace(/CONTRACT_VERSION = '[^']*'/, `CONTRACT_VERSION = '${version}'`));

// Imported only now, so that the document carries the version just written.
const { createOpenApiDocument, stringifyOpenApiDocument } = await import('../src/index.ts');
const target = file('../openapi.json');
writeFileSync(target, stringifyOpenApiDocument(createOpenApiDocument()));
console.log(`Wrote ${target} (version ${version})`);
