import { describe, expect, it } from 'vitest';
import { FIRST_RELEASE, interfaceVersion } from './interface-version.ts';

describe('interfaceVersion', () => {
  it.each([
    ['0.0.0', FIRST_RELEASE],
    ['1.0.0', '1.0.0'],
    ['1.2.3', '1.2.3'],
    // A rehearsal's snapshot is a release of its own, stated as it is.
    ['0.0.0-rehearsal-20261128', '0.0.0-rehearsal-20261128'],
  ])('states a contract package at %s as the interface %s', (packageVersion, expected) => {
    expect(interfaceVersion(packageVersion)).toBe(expected);
  });
});
