import { hash } from 'node:crypto';

export const hashToken = (token: string): Buffer => hash('sha256', token, 'buffer');

/** Equal strings of the same length, compared in time that depends only on the length. */
const equalInConstantTime = (a: string, b: string): boolean => {
  let difference = a.length ^ b.length;
  for (let index = 0; index < a.length; index += 1) difference |= a.charCodeAt(index) ^ b.charCodeAt(index);
  return difference === 0;
};

/**
 * The index in `hashes` of the one `token` hashes to, else -1. Comparing fixed-length digests in
 * constant time, and always against every hash, leaks neither a token's length nor which one was
 * close. Hex digests compared as strings: a Buffer digest per request cost four times as much as
 * the hash itself (profiled).
 */
export const createTokenMatcher = (hashes: readonly Buffer[]): ((token: string) => number) => {
  if (hashes.length === 0) throw new Error('At least one API token is required.');
  const known = hashes.map((digest) => digest.toString('hex'));
  return (token) => {
    const presented = hash('sha256', token);
    let found = -1;
    for (let index = 0; index < known.length; index += 1) {
      if (equalInConstantTime(presented, known[index] as string)) found = index;
    }
    return found;
  };
};

/** Accepts a token whose SHA-256 equals one of `hashes` (see createTokenMatcher). */
export const createTokenVerifier = (hashes: readonly Buffer[]): ((token: string) => boolean) => {
  const match = createTokenMatcher(hashes);
  return (token) => match(token) !== -1;
};
