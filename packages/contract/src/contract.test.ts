import { type AppRoute, type AppRouter, isAppRoute } from '@ts-rest/core';
import { describe, expect, it } from 'vitest';
import { contract, SCOPES } from './contract.ts';

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
