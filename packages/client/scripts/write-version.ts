/**
 * Writes src/version.ts from package.json, so that the User-Agent names the version released:
 * `pnpm version-packages` runs it after `changeset version` (the version commit carries it), and
 * `pnpm build` again, so that a build never ships another version's name.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const packageDir = new URL('..', import.meta.url);
const { version } = JSON.parse(readFileSync(new URL('package.json', packageDir), 'utf8')) as { version: string };
const file = new URL('src/version.ts', packageDir);
const text = `/** This package's version (written by scripts/write-version.ts on build). */\nexport const VERSION = '${version}';\n`;
if (readFileSync(file, 'utf8') !== text) writeFileSync(file, text);
