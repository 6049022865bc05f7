/**
 * The version of the interface, which the OpenAPI document states as `info.version`, from the
 * contract package's version. Until its first release a package says 0.0.0, as changesets expects:
 * the first release's major changeset then makes it exactly 1.0.0 (a package that said 1.0.0 would
 * be released as 2.0.0). The document describes that first version from the start.
 */
export const UNRELEASED = '0.0.0';
export const FIRST_RELEASE = '1.0.0';

export const interfaceVersion = (packageVersion: string): string =>
  packageVersion === UNRELEASED ? FIRST_RELEASE : packageVersion;
