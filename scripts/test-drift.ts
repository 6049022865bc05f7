/**
 * Proves that the type tests catch drift: applies real drifts, one at a time, to a copy of the
 * repository and checks that `tsc` rejects each, in the package the drift would break. A drift
 * that type-checks means server, client and contract could part without a test noticing.
 *
 *   pnpm test:drift   (run by .ci/run; about half a minute)
 *
 * The copy holds the tracked files as they are in the working tree, and links the installed
 * dependencies (the workspace packages resolve to the copy's own sources), so nothing in the
 * repository is touched.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PACKAGES = ['apps/api', 'packages/client', 'packages/contract'];

type Edit = { file: string; find: RegExp; replace: string } | { file: string; create: string };
type Drift = {
  name: string;
  edits: Edit[];
  /** The packages whose type check must fail, and a file the errors must name in each. */
  rejectedBy: { pkg: string; naming: RegExp }[];
};

/** A consumer's calls, well-typed: the control for the client drift below. */
const CLIENT_PROBE = `import { createPlantClient, createPlantRestClient } from './index.ts';

const options = { baseUrl: 'http://127.0.0.1:1', token: 'drift-probe-token' };
export const probe = async () => {
  await createPlantClient(options).createPlant(BODY);
  await createPlantRestClient(options).createPlant({ body: BODY });
};
`;
const probeWith = (body: string) => CLIENT_PROBE.replaceAll('BODY', body);

const DRIFTS: Drift[] = [
  {
    name: 'a field renamed in the contract (name → title)',
    edits: [{ file: 'packages/contract/src/schemas.ts', find: /^(\s*)name:/m, replace: '$1title:' }],
    // Derived everywhere from the schema, the plant's shape is written by hand only where a plant
    // is spelled out: the shared store suite's plants.
    rejectedBy: [{ pkg: 'apps/api', naming: /test\/support\/plant-store-suite\.ts/ }],
  },
  {
    name: 'a documented status removed from createPlant (409)',
    edits: [
      {
        file: 'packages/contract/src/contract.ts',
        find: /(responses: withFailures\(\{ 200: Plant \}, [^)]*?)409, /,
        replace: '$1',
      },
    ],
    rejectedBy: [
      { pkg: 'apps/api', naming: /src\/plants\/plants-router\.ts/ },
      { pkg: 'packages/client', naming: /src\/plant-store-fake\/plant-store-fake\.ts/ },
    ],
  },
  {
    name: "the client's fake answering createPlant with a status the contract does not list (201)",
    edits: [
      {
        file: 'packages/client/src/plant-store-fake/plant-store-fake.ts',
        find: /return \{ status: 200, body: withoutId\(plant\) \};/,
        replace: 'return { status: 201, body: withoutId(plant) };',
      },
    ],
    rejectedBy: [{ pkg: 'packages/client', naming: /src\/plant-store-fake\/plant-store-fake\.ts/ }],
  },
  {
    name: "a handler answering 200 with something other than the contract's Plant",
    edits: [
      {
        file: 'apps/api/src/plants/plants-router.ts',
        find: /body: withoutId\(result\.plant\)/,
        replace: 'body: { title: result.plant.name }',
      },
    ],
    rejectedBy: [{ pkg: 'apps/api', naming: /src\/plants\/plants-router\.ts/ }],
  },
  {
    name: 'a third webhook event type in the contract that the client does not handle',
    edits: [
      {
        file: 'packages/contract/src/webhook-events.ts',
        find: /\n\} as const satisfies Record<string, EventDefinition>;/,
        replace: `
  plantRenamed: {
    data: PlantDeleted,
    subscribedByDefault: false,
    dataOf: (plant) => ({ id: plant.id, plant }),
  },
} as const satisfies Record<string, EventDefinition>;`,
      },
    ],
    rejectedBy: [{ pkg: 'packages/client', naming: /src\/webhooks\/verify-plant-webhook\.ts/ }],
  },
  {
    name: 'a client call with a body the contract does not accept',
    edits: [{ file: 'packages/client/src/drift-probe.ts', create: probeWith("{ id: 1, title: 'Fern' }") }],
    rejectedBy: [{ pkg: 'packages/client', naming: /src\/drift-probe\.ts/ }],
  },
];

/** The tracked files, as in the working tree, plus links to the installed dependencies. */
const copyRepository = (): string => {
  const copy = mkdtempSync(join(tmpdir(), 'plant-drift-'));
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue;
    cpSync(join(ROOT, file), join(copy, file), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  // pnpm's per-package node_modules hold relative links: into the root store (linked above), and
  // to workspace packages, which then resolve to the copy's sources.
  for (const pkg of PACKAGES) {
    cpSync(join(ROOT, pkg, 'node_modules'), join(copy, pkg, 'node_modules'), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
  return copy;
};

const typecheck = (copy: string, pkg: string) => {
  const result = spawnSync(join(copy, pkg, 'node_modules/.bin/tsc'), ['--noEmit', '-p', 'tsconfig.json'], {
    cwd: join(copy, pkg),
    encoding: 'utf8',
  });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}` };
};

const apply = (copy: string, edit: Edit): (() => void) => {
  const path = join(copy, edit.file);
  if ('create' in edit) {
    writeFileSync(path, edit.create);
    return () => rmSync(path);
  }
  const before = readFileSync(path, 'utf8');
  if (!edit.find.test(before)) {
    throw new Error(`${edit.file} no longer contains ${edit.find}: update this drift in scripts/test-drift.ts.`);
  }
  writeFileSync(path, before.replace(edit.find, edit.replace));
  return () => writeFileSync(path, before);
};

const main = () => {
  const copy = copyRepository();
  const failures: string[] = [];
  try {
    // The unchanged copy, and the client probe with a valid body, must type-check: otherwise a
    // rejection below would prove nothing.
    const controls: [string, Edit[]][] = [
      ['the unchanged repository', []],
      [
        'the client probe with a valid body',
        [{ file: 'packages/client/src/drift-probe.ts', create: probeWith("{ id: 1, name: 'Fern' }") }],
      ],
    ];
    for (const [name, edits] of controls) {
      const undo = edits.map((edit) => apply(copy, edit));
      for (const pkg of PACKAGES) {
        const { ok, output } = typecheck(copy, pkg);
        if (!ok) throw new Error(`The control (${name}) does not type-check in ${pkg}:\n${output}`);
      }
      for (const revert of undo) revert();
      console.log(`control: ${name} type-checks`);
    }
    for (const drift of DRIFTS) {
      const undo = drift.edits.map((edit) => apply(copy, edit));
      for (const { pkg, naming } of drift.rejectedBy) {
        const { ok, output } = typecheck(copy, pkg);
        const firstError = output.split('\n').find((line) => /error TS\d+/.test(line)) ?? '';
        if (ok) failures.push(`${drift.name}: ${pkg} still type-checks`);
        else if (!naming.test(output)) failures.push(`${drift.name}: ${pkg} failed elsewhere: ${firstError}`);
        else console.log(`rejected: ${drift.name} — ${pkg}: ${firstError.trim()}`);
      }
      for (const revert of undo.reverse()) revert();
    }
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.error(`\nDrift the type tests let through:\n${failures.map((line) => `  ${line}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`\nAll ${DRIFTS.length} drifts were rejected by tsc.`);
};

main();
