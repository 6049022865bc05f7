import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Runs the guard on a temporary copy of the repository's parts it reads: the current document as
 * the released one, then the document with one real change, and the pending changesets.
 */

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('api-check.ts', import.meta.url));
const DOCUMENT = JSON.parse(readFileSync(join(REPO, 'packages/contract/openapi.json'), 'utf8'));

type Document = typeof DOCUMENT;
const copies: string[] = [];
afterEach(() => {
  for (const dir of copies.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy where the released document is today's and the current one is `change` applied to it. */
const copyWith = (change: (document: Document) => void, changesets: Record<string, string> = {}): string => {
  const root = mkdtempSync(join(tmpdir(), 'plant-api-check-'));
  copies.push(root);
  mkdirSync(join(root, 'packages/contract/released'), { recursive: true });
  mkdirSync(join(root, '.changeset'));
  cpSync(join(REPO, '.changeset/config.json'), join(root, '.changeset/config.json'));
  writeFileSync(join(root, 'packages/contract/released/openapi.json'), JSON.stringify(DOCUMENT));
  const current = structuredClone(DOCUMENT);
  change(current);
  writeFileSync(join(root, 'packages/contract/openapi.json'), JSON.stringify(current));
  for (const [name, text] of Object.entries(changesets)) writeFileSync(join(root, '.changeset', name), text);
  return root;
};

const runGuard = (root: string): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, root], (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code) : 0, output: `${stdout}${stderr}` });
    });
  });

const MAJOR = `---\n"@org/plant-contract": major\n"@org/plant-client": major\n---\n\nRemoves POST /webhooks/{id}/recover.\n`;

const removeRoute = (document: Document) => {
  delete document.paths['/webhooks/{id}/recover'];
};

// Each case starts a node process; on a loaded machine that takes seconds, not the default 5.
describe('pnpm api:check', { timeout: 60_000 }, () => {
  it.each([
    ['a route removed', removeRoute, '#/paths/~1webhooks~1{id}~1recover/post'],
    [
      'a request field made required',
      (document: Document) => document.components.schemas.NewWebhookEndpoint.required.push('description'),
      '#/paths/~1webhooks/post/requestBody/content/application~1json/schema/required/1',
    ],
    [
      'a limit narrowed',
      (document: Document) => {
        document.components.schemas.NewPlant.properties.name.maxLength = 100;
      },
      '#/paths/~1plants/post/requestBody/content/application~1json/schema/properties/name/maxLength',
    ],
    [
      'a documented status removed',
      (document: Document) => {
        delete document.paths['/plants/{id}'].get.responses['404'];
      },
      '#/paths/~1plants~1{id}/get/responses/404',
    ],
    [
      'a response field removed',
      (document: Document) => {
        delete document.components.schemas.PlantWithId.properties.tag;
      },
      '#/paths/~1plants~1{id}/get/responses/200/content/application~1json/schema/properties/tag',
    ],
  ])('fails on %s, naming it by its place in the document and saying how to ship it', async (_, change, pointer) => {
    const { code, output } = await runGuard(copyWith(change));
    expect(code, output).toBe(1);
    expect(output).toMatch(/^Breaking: [1-9]/m);
    expect(output).toContain(`  ${pointer}\n`);
    expect(output).toContain('choose major for @org/plant-contract and @org/plant-client');
  });

  it.each([
    [
      'a new optional request field',
      (document: Document) => {
        document.components.schemas.NewPlant.properties.colour = { type: 'string', maxLength: 50 };
      },
      // NewPlant is the newPlant webhook's body too, and the plant in plantDeleted's, where the
      // service sends it: compatible there as well.
      ['Compatible: 3', '#/paths/~1plants/post/requestBody/content/application~1json/schema/properties/colour'],
    ],
    [
      'a new route',
      (document: Document) => {
        document.paths['/trees'] = { get: { ...document.paths['/plants'].get, operationId: 'listTrees' } };
      },
      ['Compatible: 1', '#/paths/~1trees/get'],
    ],
    [
      'a changed description',
      (document: Document) => {
        document.paths['/plants'].post.description = 'Stores a plant.';
      },
      ['Documentation only: 1', '#/paths/~1plants/post/description'],
    ],
  ])('passes %s', async (_, change, [heading, pointer]) => {
    const { code, output } = await runGuard(copyWith(change));
    expect(code, output).toBe(0);
    expect(output).toContain('Breaking: 0\n');
    expect(output).toContain(`${heading}\n  ${pointer}\n`);
  });

  it('passes a breaking change that a pending major changeset of both packages announces', async () => {
    const { code, output } = await runGuard(copyWith(removeRoute, { 'remove-recover.md': MAJOR }));
    expect(code, output).toBe(0);
    expect(output).toContain('Breaking: 1\n  #/paths/~1webhooks~1{id}~1recover/post\n');
  });

  it('still fails when the pending changesets bump by minor, or only one of the packages by major', async () => {
    const minor = MAJOR.replaceAll('major', 'minor');
    const contractOnly = `---\n"@org/plant-contract": major\n---\n\nRemoves a route.\n`;
    const runs = [{ 'a.md': minor }, { 'b.md': contractOnly }].map((changesets) =>
      runGuard(copyWith(removeRoute, changesets)),
    );
    for (const { code, output } of await Promise.all(runs)) expect(code, output).toBe(1);
  });

  it('passes the repository as it is', async () => {
    const { code, output } = await runGuard(REPO);
    expect(code, output).toBe(0);
  });
});
