import type { IncomingMessage, ServerResponse } from 'node:http';
import { otherMethods } from './error-handler.ts';
import { withoutTrailingSlash } from './paths.ts';
import './request-fields.ts';

export type GetHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Fixed paths answered on GET and HEAD; other methods get 405, OPTIONS 204. */
export type GetRoutes = ReadonlyMap<string, GetHandler>;

const readOnly = otherMethods(['GET', 'HEAD']);

/**
 * Answers the request when `pathname` is one of `routes` (and returns the answer's promise, which
 * rejects with what the caller should answer instead); undefined for any other path.
 */
export const answerGet = (
  routes: GetRoutes,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> | undefined => {
  // Case-insensitive, as paths matched when the app ran on Express: kept for clients.
  const path = routes.has(pathname) ? pathname : withoutTrailingSlash(pathname).toLowerCase();
  const handler = routes.get(path);
  if (handler === undefined) return undefined;
  req.route = path;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    readOnly(req, res);
    return Promise.resolve();
  }
  try {
    return Promise.resolve(handler(req, res));
  } catch (error) {
    return Promise.reject(error);
  }
};
