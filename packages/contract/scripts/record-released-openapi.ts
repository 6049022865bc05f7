/**
 * Records the document of the release being versioned as the baseline of `pnpm api:check`
 * (packages/contract/released/openapi.json). `pnpm version-packages` runs it after `changeset
 * version` and the openapi script, so the release commit carries it, and the old-client test finds
 * the last release as the commit that last changed this file.
 */
import { copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = (path: string) => fileURLToPath(new URL(path, import.meta.url));
copyFileSync(file('../openapi.json'), file('../released/openapi.json'));
console.log(`Recorded ${file('../released/openapi.json')}`);
