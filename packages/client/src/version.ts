/** This package's version (written by scripts/write-version.ts on build). */
export const VERSION = '1.0.0';
