/** Names as a sentence lists them: `a`, `a and b`, `a, b and c`. */
export const andList = (names: readonly string[]): string =>
  names.length < 2 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
