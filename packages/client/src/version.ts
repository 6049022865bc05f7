/** This package's version (written by scripts/write-version.ts on build). */
export const VERSION = '0.0.0';
