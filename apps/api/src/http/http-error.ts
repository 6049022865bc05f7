import type { ServerResponse } from 'node:http';
import { writeHead } from './security-headers.ts';

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

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Answers `text`, already serialized JSON, with its length: one write for headers and body. */
export const sendJson = (
  res: ServerResponse,
  status: number,
  text: string,
  headers: Readonly<Record<string, string>> = {},
): void => {
  const list: (string | number)[] = ['Content-Type', JSON_CONTENT_TYPE, 'Content-Length', Buffer.byteLength(text)];
  for (const name in headers) list.push(name, headers[name] as string);
  writeHead(res, status, list).end(text);
};

/** Answers with the contract's `Error` body: `{ error: <HTTP status>, message }`. */
export const sendError = (
  res: ServerResponse,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
): void => {
  sendJson(res, status, JSON.stringify({ error: status, message }), headers);
};
