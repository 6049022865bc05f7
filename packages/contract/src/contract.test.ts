import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import { contract, SCOPES } from './contract.ts';
import { componentSchemas } from './openapi/components.ts';

const routesOf = (router: AppRouter): [string, AppRoute][] =>
  Object.entries(router).flatMap(([name, entry]) =>
    isAppRoute(entry) ? [[name, entry] as [string, AppRoute]] : routesOf(entry),
  );

describe('contract', () => {
  // The service authorizes JWTs by this declaration alone: a route without one would be refused to
  // every scoped token, or worse, be forgotten by a reviewer.
  it.each(routesOf(contract))('%s declares the scope it needs in its metadata', (_name, route) => {
    expect(SCOPES).toContain((route.metadata as { scope?: unknown } | undefined)?.scope);
  });

  it('asks a write scope of every method that changes something and a read scope of the others', () => {
    for (const [name, route] of routesOf(contract)) {
      const { scope } = route.metadata as { scope: string };
      expect(`${name} ${scope}`).toBe(`${name} ${scope.replace(/:\w+$/, route.method === 'GET' ? ':read' : ':write')}`);
    }
  });
});

/** A README's table rows whose first cell matches `firstCell`, as trimmed cells. */
const tableRows = (readmePath: string, firstCell: RegExp): string[][] => {
  const readme = readFileSync(readmePath, 'utf8');
  return readme
    .split('\n')
    .filter((line) => firstCell.test(line.split('|')[1]?.trim() ?? ''))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
};

/** What the README's table says of a route: its name, method and path, and its statuses. */
const rowOf = ([name, route]: [string, AppRoute]): string[] => {
  const statuses = Object.keys(route.responses).map(Number);
  return [
    `\`${name}\``,
    `\`${route.method} ${route.path}\``,
    statuses.filter((status) => status < 300).join(', '),
    statuses.filter((status) => status >= 300).join(', '),
  ];
};

describe('README.md', () => {
  it('lists every route of the contract with its method, path and statuses, and no other', () => {
    const rows = tableRows(join(import.meta.dirname, '..', 'README.md'), /^`\w+`$/);
    expect(rows).toStrictEqual(routesOf(contract).map(rowOf));
  });
});

describe('README.md, of the schemas', () => {
  it("names every schema of the document's components (the interface's Error as ApiError)", () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const unnamed = componentSchemas()
      .map(([name]) => (name === 'Error' ? 'ApiError' : name))
      .filter((name) => !readme.includes(`\`${name}\``));
    expect(unnamed).toStrictEqual([]);
  });
});

/**
 * The repository's root: the nearest directory above holding pnpm-workspace.yaml. Not a fixed
 * number of levels up: the mutation run (Stryker) runs these tests from a copy of the package
 * inside the package's own directory.
 */
const repositoryRoot = (from: string): string => {
  const parent = dirname(from);
  if (parent === from) throw new Error('No pnpm-workspace.yaml above the tests.');
  return existsSync(join(from, 'pnpm-workspace.yaml')) ? from : repositoryRoot(parent);
};

describe("the repository's README.md", () => {
  // A newcomer reads the root README's route table first: it must name every route, its success
  // status and the scope a JWT needs, and nothing the contract does not have.
  it('lists every route of the contract with its success status and scope, and no other', () => {
    const rows = tableRows(join(repositoryRoot(import.meta.dirname), 'README.md'), /^`[A-Z]+ \/\S*`$/);
    const summary = ([method, , success, scope]: string[]) => [method, success, scope];
    expect(rows.map(summary)).toStrictEqual(
      routesOf(contract).map(([, route]) => [
        `\`${route.method} ${route.path}\``,
        Object.keys(route.responses)
          .filter((status) => Number(status) < 300)
          .join(', '),
        `\`${(route.metadata as { scope: string }).scope}\``,
      ]),
    );
  });
});
