/**
 * `pnpm api:check`: compares the contract's OpenAPI document (packages/contract/openapi.json) with
 * the last released one (packages/contract/released/openapi.json, recorded by `pnpm
 * version-packages`), lists each change as breaking, compatible or documentation only, and fails
 * on a breaking change unless a pending changeset bumps @org/plant-contract and @org/plant-client
 * by major. Reads only files of the repository: a clean clone checks without a registry.
 *
 * `node api-check.ts [root]`: root is the repository (by default the one this script is in).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Change, type ChangeKind, classifyChanges } from './compatibility/classify.ts';
import { majorReleasePending, PUBLISHED_PACKAGES } from './compatibility/pending-majors.ts';

const root = resolve(process.argv[2] ?? fileURLToPath(new URL('../../..', import.meta.url)));
const CURRENT = 'packages/contract/openapi.json';
const RELEASED = 'packages/contract/released/openapi.json';
const read = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as { info: { version: string } };

const released = read(RELEASED);
const current = read(CURRENT);
const changes = classifyChanges(released, current);
const of = (kind: ChangeKind) => changes.filter((change) => change.kind === kind);

const HEADINGS: Readonly<Record<ChangeKind, string>> = {
  breaking: 'Breaking',
  compatible: 'Compatible',
  documentation: 'Documentation only',
};
const line = ({ pointer, description }: Change) => `  ${pointer}\n      ${description}`;

console.log(`API compatibility: ${CURRENT} against ${RELEASED} (version ${released.info.version})`);
for (const kind of ['breaking', 'compatible', 'documentation'] as const) {
  const found = of(kind);
  console.log(`${HEADINGS[kind]}: ${found.length}`);
  for (const change of found) console.log(line(change));
}

const breaking = of('breaking');
if (breaking.length > 0) {
  if (await majorReleasePending(root)) {
    console.log(`The breaking changes ship in the next major release, which a pending changeset announces.`);
  } else {
    console.error(
      `\n${breaking.length} breaking change(s), listed above by their place in the document, and no pending changeset bumps ` +
        `${PUBLISHED_PACKAGES.join(' and ')} by major: clients already installed would break against this server.\n` +
        'Make the change compatible (a new optional field, a new route, a new status beside the old one), or ship it as ' +
        `a major release: run \`pnpm changeset\`, choose major for ${PUBLISHED_PACKAGES.join(' and ')}, and say in its ` +
        'summary what breaks and how a client moves on (it becomes the changelog entry). See "Compatibility" in README.md.',
    );
    process.exit(1);
  }
}
