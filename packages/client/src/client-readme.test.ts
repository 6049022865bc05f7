import { readFileSync } from 'node:fs';
import { contract, IdempotencyHeaders } from '@org/plant-contract';
import { describe, expect, it } from 'vitest';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
/** The README's prose as sentences (list items and table cells apart), whitespace runs as single spaces. */
const sentences = readme.split(/\n\s*- |\|/).flatMap((part) => part.replace(/\s+/g, ' ').split(/(?<=\.) (?=[A-Z`])/));

describe('README.md', () => {
  it('names, wherever it says which calls send an Idempotency-Key, exactly the routes that take one', () => {
    const keyed = Object.entries(contract)
      .filter(([, route]) => 'headers' in route && route.headers === IdempotencyHeaders)
      .map(([name]) => name)
      .sort();
    const routeNames = new Set(Object.keys(contract));
    const saying = sentences.filter((sentence) => /sends? an `Idempotency-Key`/.test(sentence));
    expect(saying.length).toBeGreaterThan(1);
    for (const sentence of saying) {
      const named = [...sentence.matchAll(/`(\w+)`/g)]
        .map(([, name]) => name ?? '')
        .filter((name) => routeNames.has(name));
      expect(named.sort(), sentence).toStrictEqual(keyed);
    }
    // Nor does a line (a table row) say they are not needed.
    expect(readme.split('\n').filter((line) => /idempotency key/i.test(line) && /not needed/.test(line))).toStrictEqual(
      [],
    );
  });
});
