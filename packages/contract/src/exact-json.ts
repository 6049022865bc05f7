/**
 * JSON with exact integers. `JSON.parse` rounds integers beyond ±(2^53 − 1); these helpers keep
 * them exact as `bigint` using the reviver's source text (ES2025, Node ≥ 21) and write them back
 * with `JSON.rawJSON`, so an int64 id survives the wire in both directions. Runtimes without these
 * (Node 20, older browsers) get equivalent fallbacks.
 */

type RawJson = (text: string) => unknown;
type ReviverContext = { source?: string };

const rawJSON = (JSON as { rawJSON?: RawJson }).rawJSON;

const PLAIN_INTEGER = /^-?(?:0|[1-9]\d*)$/;
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** 2^63 has 19 digits: an integer with more cannot be an int64, so it need not be built exactly. */
const MAX_EXACT_DIGITS = 19;

const fromExactInteger = (text: string): number | bigint => {
  const big = BigInt(text);
  const small = Number(big);
  return Number.isSafeInteger(small) ? small : big;
};

/**
 * The value of a JSON number literal without rounding: a number when that is exact, a bigint for an
 * integer beyond 2^53 (up to 19 digits), and NaN for a non-integer that a double would have turned
 * into an integer (`1.00000000000000001`), so it can never pass as an id.
 */
export const exactNumber = (source: string, parsed: number): number | bigint => {
  if (PLAIN_INTEGER.test(source)) {
    return Number.isSafeInteger(parsed) || source.replace('-', '').length > MAX_EXACT_DIGITS ? parsed : BigInt(source);
  }
  const match = DECIMAL.exec(source);
  if (!match) return parsed;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  let digits = (whole + fraction).replace(/^0+/, '');
  let exponent = Number(exponentText) - fraction.length;
  while (digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent += 1;
  }
  // Zero, which JSON.parse reads exactly, -0 included.
  if (digits === '') return parsed;
  if (exponent < 0) return Number.isInteger(parsed) ? Number.NaN : parsed;
  if (digits.length + exponent > MAX_EXACT_DIGITS) return parsed;
  return fromExactInteger(sign + digits + '0'.repeat(exponent));
};

function reviveExactNumber(_key: string, value: unknown, context?: ReviverContext): unknown {
  return typeof value === 'number' && context?.source !== undefined ? exactNumber(context.source, value) : value;
}

/** Whether this runtime gives revivers the source text of each value (ES2025; Node ≥ 21, not Node 20). */
const hasSourceText = ((): boolean => {
  let source: string | undefined;
  JSON.parse('1', ((_key: string, value: unknown, context?: ReviverContext) => {
    source = context?.source;
    return value;
  }) as (key: string, value: unknown) => unknown);
  return source === '1';
})();

const numberMarker = `__exact_json_number_${Math.random().toString(36).slice(2)}:`;
/** A JSON string literal (left as it is) or a JSON number literal (wrapped in a marked string). */
const STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/**
 * `parseExactJson` for runtimes without the reviver's source text: every number literal is first
 * wrapped in a marked string, so the reviver still sees its digits. Exported for tests.
 */
export const parseExactJsonFromMarkedText = (text: string): unknown =>
  JSON.parse(
    text.replace(STRING_OR_NUMBER, (token) => (token.startsWith('"') ? token : `"${numberMarker}${token}"`)),
    (key, value: unknown) => {
      // A number where a key belongs was invalid JSON before it was wrapped, and must stay so.
      if (key.startsWith(numberMarker))
        throw new SyntaxError(`Unexpected number in JSON: ${key.slice(numberMarker.length)}`);
      if (typeof value !== 'string' || !value.startsWith(numberMarker)) return value;
      const source = value.slice(numberMarker.length);
      return exactNumber(source, Number(source));
    },
  );

/** 16 digits in a row (10^15 < 2^53), or a fraction or exponent. */
const POSSIBLY_INEXACT = /\d{16}|\d[.eE]/;

/**
 * Whether plain `JSON.parse` keeps every number of this JSON text exact: none has 16 digits in a
 * row, a fraction or an exponent. Conservative: a string such as "v1.5" also answers false, which
 * only costs the exact (slower) parse.
 */
export const hasOnlyExactNumbers = (text: string): boolean => !POSSIBLY_INEXACT.test(text);

/** `JSON.parse` that keeps every integer exact (bigint beyond ±(2^53 − 1)). */
export const parseExactJson = (text: string): unknown => {
  // The reviver runs for every value; most bodies need none of it.
  if (hasOnlyExactNumbers(text)) return JSON.parse(text);
  return hasSourceText
    ? JSON.parse(text, reviveExactNumber as (key: string, value: unknown) => unknown)
    : parseExactJsonFromMarkedText(text);
};

const markerPrefix = `__exact_json_bigint_${Math.random().toString(36).slice(2)}:`;
const markerPattern = new RegExp(`"${markerPrefix}(-?\\d+)"`, 'g');

/**
 * A `JSON.stringify` replacer that writes bigints as JSON integers. Runtimes without `JSON.rawJSON`
 * (Node 20, older browsers) get a marker string instead, which `restoreExactIntegers` turns back
 * into the digits.
 */
export function exactJsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value !== 'bigint') return value;
  return rawJSON ? rawJSON(value.toString()) : markerPrefix + value.toString();
}

/** Finishes JSON written with `exactJsonReplacer` where `JSON.rawJSON` is missing. */
export const restoreExactIntegers = (text: string): string =>
  rawJSON || !text.includes(markerPrefix) ? text : text.replace(markerPattern, '$1');

/** `JSON.stringify` that writes bigints as plain JSON integers, digit for digit. */
export const stringifyExactJson = (value: unknown): string =>
  restoreExactIntegers(JSON.stringify(value, exactJsonReplacer));
