import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { interfaceVersion } from '../../scripts/interface-version.ts';
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

  it("carries the interface's version as info.version: the contract package's, 1.0.0 before the first release", () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(JSON.parse(readFileSync(FILE, 'utf8')).info.version).toBe(interfaceVersion(version));
    expect(CONTRACT_VERSION, 'src/version.ts is stale: run pnpm --filter @org/plant-contract openapi').toBe(
      interfaceVersion(version),
    );
  });
});
