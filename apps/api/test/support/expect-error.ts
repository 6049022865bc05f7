import { expect } from 'vitest';

const STACK_OR_MARKUP = /<html|<!doctype|<body|\n\s+at |\.[cm]?[jt]s:\d+|node_modules|SqliteError|ZodError/i;

/** Asserts the contract's Error answer: exact status, JSON, exactly `{ error, message }`, no leaks. */
export const expectError = async (response: Response, status: number, mentions?: RegExp): Promise<string> => {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
  const text = await response.text();
  expect(text).not.toMatch(STACK_OR_MARKUP);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'message']);
  expect(body.error).toBe(status);
  expect(body.message).toEqual(expect.any(String));
  const message = body.message as string;
  expect(message).toMatch(/^[A-Z]/);
  if (mentions) expect(message).toMatch(mentions);
  return message;
};
