import type { Response } from 'express';

/** A failure with the status, message and headers the client should see. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/** Answers with the contract's `Error` body: `{ error: <HTTP status>, message }`. */
export const sendError = (
  res: Response,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void => {
  res.status(status).set(headers).json({ error: status, message });
};
