import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Env } from './config.ts';
import { CONFIG_DEFAULTS } from './config-defaults.ts';

const PAGE = new URL('../../../docs/configuration.md', import.meta.url);
/** A page of the repository, its whitespace runs as single spaces (prose wraps anywhere). */
const prose = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');

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

describe('the default retry schedule in the docs', () => {
  const delays = CONFIG_DEFAULTS.webhooks.retryDelaysMs;
  /** A delay as the docs write it: 5 s, 5 min, 2 h. */
  const spoken = (ms: number) =>
    ms < 60_000 ? `${ms / 1_000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`;

  it('states the total of the default delays, to a tenth of an hour', () => {
    const total = `${(delays.reduce((sum, delay) => sum + delay, 0) / 3_600_000).toFixed(1)} h in all`;
    for (const page of ['README.md', 'docs/configuration.md']) expect(prose(page), page).toContain(total);
  });

  it('lists each default delay in docs/webhooks.md', () => {
    const listed = `${delays.slice(0, -1).map(spoken).join(', ')} and ${spoken(delays.at(-1) ?? 0)}`;
    expect(prose('docs/webhooks.md')).toContain(`is retried after ${listed} (\`PLANT_WEBHOOK_RETRY_DELAYS_MS\`)`);
  });
});
