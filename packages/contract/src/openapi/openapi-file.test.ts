import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_VERSION } from '../version.ts';
import { createOpenApiDocument, stringifyOpenApiDocument } from './openapi-document.ts';

const FILE = new URL('../../openapi.json', import.meta.url);

describe('packages/contract/openapi.json', () => {
  it('is the document the contract generates (regenerate: pnpm --filter @org/plant-contract openapi)', () => {
    const committed = readFileSync(FILE, 'utf8');
    const generated = stringifyOpenApiDocument(createOpenApiDocument());
    // Compare the parsed documents first for a readable diff, then the text for formatting drift.
    expect(JSON.parse(committed), 'openapi.json is stale: run pnpm --filter @org/plant-contract openapi').toEqual(
      JSON.parse(generated),
    );
    expect(committed, 'openapi.json is stale: run pnpm --filter @org/plant-contract openapi').toBe(generated);
  });

  it("carries the contract package's version as info.version", () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(JSON.parse(readFileSync(FILE, 'utf8')).info.version).toBe(version);
    expect(CONTRACT_VERSION, 'src/version.ts is stale: run pnpm --filter @org/plant-contract openapi').toBe(version);
  });
});
