/** Writes the contract's OpenAPI document to packages/contract/openapi.json (`pnpm --filter @org/plant-contract openapi`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createOpenApiDocument, stringifyOpenApiDocument } from '../src/index.ts';

const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
writeFileSync(target, stringifyOpenApiDocument(createOpenApiDocument()));
console.log(`Wrote ${target}`);
