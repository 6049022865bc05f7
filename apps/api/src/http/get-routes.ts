import type { IncomingMessage, ServerResponse } from 'node:http';
import { otherMethods } from './error-handler.ts';
import './request-fields.ts';

export type GetHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Fixed paths answered on GET and HEAD; other methods get 405, OPTIONS 204. */
export type GetRoutes = ReadonlyMap<string, GetHandler>;

const readOnly = otherMethods(['GET', 'HEAD']);

/** Without one trailing slash, lower-cased: how paths matched when the app ran on Express, kept for clients. */
const normalize = (pathname: string): string =>
  (pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname).toLowerCase();

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
  const path = routes.has(pathname) ? pathname : normalize(pathname);
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
