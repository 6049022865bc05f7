// StrykerJS (`pnpm test:mutation`) reads tsconfig files and type-checks mutants through the
// TypeScript compiler API, which TypeScript 7 (native) no longer ships. TypeScript 6, the last
// release with that API, serves Stryker for this only; everything else compiles with the catalog's
// TypeScript 7. The checker asks for TypeScript as a peer, which would hand it ours, so the peer
// becomes a dependency of its own.
const STRYKER_TYPESCRIPT = '6.0.3';

module.exports = {
  hooks: {
    readPackage(pkg) {
      if (pkg.name === '@stryker-mutator/core' || pkg.name === '@stryker-mutator/typescript-checker') {
        if (pkg.peerDependencies) delete pkg.peerDependencies.typescript;
        pkg.dependencies = { ...pkg.dependencies, typescript: STRYKER_TYPESCRIPT };
      }
      return pkg;
    },
  },
};
