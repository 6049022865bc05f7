/**
 * One-dimensional arrays in PostgreSQL's binary format (what `array_recv` reads), for parameters
 * of many values. node-postgres sends a Buffer as a binary parameter as it is; any other array it
 * writes as an array literal, escaping every element with two regular expressions (the batch
 * create's texts are JSON, full of quotes: the largest share of node-postgres' time in a create,
 * profiled) and the server then parses the literal back. In binary, each element is its length and
 * its bytes: nothing to escape on either side. The parameter's type comes from the statement
 * (`$1::int8[]`), and the element type written here must match it.
 */

/** The element types' OIDs (pg_type), as `array_recv` checks them. */
const INT8_OID = 20;
const TEXT_OID = 25;

/** Header: dimensions, has-nulls flag, element type; then, for the one dimension, its length and lower bound. */
const HEADER_BYTES = 20;
const EMPTY_HEADER_BYTES = 12;

const withHeader = (size: number, length: number, hasNulls: boolean, elementOid: number): Buffer => {
  const out = Buffer.allocUnsafe(length === 0 ? EMPTY_HEADER_BYTES : size);
  out.writeInt32BE(length === 0 ? 0 : 1, 0);
  out.writeInt32BE(hasNulls ? 1 : 0, 4);
  out.writeInt32BE(elementOid, 8);
  if (length > 0) {
    out.writeInt32BE(length, 12);
    out.writeInt32BE(1, 16);
  }
  return out;
};

/** An `int8[]`: each value must fit a signed 64-bit integer (RangeError otherwise). */
export const int8Array = (values: readonly bigint[]): Buffer => {
  const out = withHeader(HEADER_BYTES + values.length * 12, values.length, false, INT8_OID);
  let at = HEADER_BYTES;
  for (const value of values) {
    out.writeInt32BE(8, at);
    out.writeBigInt64BE(value, at + 4);
    at += 12;
  }
  return out;
};

/** A `text[]`, NULL for null, each string as UTF-8 (a lone surrogate becomes U+FFFD, as node-postgres writes it). */
export const textArray = (values: readonly (string | null)[]): Buffer => {
  let size = HEADER_BYTES;
  let hasNulls = false;
  for (const value of values) {
    if (value === null) hasNulls = true;
    else size += Buffer.byteLength(value);
    size += 4;
  }
  const out = withHeader(size, values.length, hasNulls, TEXT_OID);
  let at = HEADER_BYTES;
  for (const value of values) {
    if (value === null) {
      out.writeInt32BE(-1, at);
      at += 4;
    } else {
      const written = out.write(value, at + 4);
      out.writeInt32BE(written, at);
      at += 4 + written;
    }
  }
  return out;
};
