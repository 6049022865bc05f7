import type { RequestHandler } from 'express';

/**
 * Headers for a JSON API (what helmet would set, minus what only matters to HTML): nothing is
 * sniffed, framed, cached or leaked through referrers. A route serving HTML or assets replaces the
 * ones it needs to.
 */
const SECURITY_HEADERS: readonly (readonly [string, string])[] = [
  ['Cache-Control', 'no-store'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
];

export const securityHeaders: RequestHandler = (_req, res, next) => {
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
  next();
};
