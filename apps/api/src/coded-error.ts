/** An error a caller tells apart by `code` (as node:net and node:dns name theirs), with a sentence as its message. */
export class CodedError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}
