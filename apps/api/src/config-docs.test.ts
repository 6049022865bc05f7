import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Env } from './config.ts';

const PAGE = new URL('../../../docs/configuration.md', import.meta.url);

/** The page's table rows by the variable named in their first cell: the cells after it. */
const documentedRows = (): Map<string, string[]> => {
  const rows = new Map<string, string[]>();
  for (const line of readFileSync(PAGE, 'utf8').split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const name = /^`([A-Z][A-Z0-9_]*)`$/.exec(cells[0] ?? '')?.[1];
    if (name !== undefined) rows.set(name, cells.slice(1));
  }
  return rows;
};

/** The text a variable takes when unset, or undefined when it has no default. */
const rawDefault = (schema: z.ZodTypeAny): string | undefined => {
  // Every variable is wrapped in a preprocess step (an empty value counts as unset).
  const inner = schema instanceof z.ZodEffects ? schema.innerType() : schema;
  return inner instanceof z.ZodDefault ? String(inner._def.defaultValue()) : undefined;
};

const variables = Object.entries(Env.shape);

describe('docs/configuration.md', () => {
  const rows = documentedRows();

  it.each(variables)('documents %s with its default', (name, schema) => {
    const row = rows.get(name);
    expect(row, `${name} has no row in docs/configuration.md`).toBeDefined();
    const defaultCell = row?.at(-1) ?? '';
    const fallback = rawDefault(schema as z.ZodTypeAny);
    if (fallback === undefined) {
      expect(defaultCell, `${name} has no default: its cell must say what unset means`).not.toMatch(/^`/);
    } else {
      expect(defaultCell.match(/^`([^`]*)`/)?.[1], `${name}'s default`).toBe(fallback);
    }
  });

  it('documents no variable the service does not read', () => {
    expect([...rows.keys()].filter((name) => !(name in Env.shape))).toStrictEqual([]);
  });
});
