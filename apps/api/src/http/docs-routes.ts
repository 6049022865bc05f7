import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { createOpenApiDocument, stringifyOpenApiDocument } from '@org/plant-contract';
import { type RequestHandler, Router } from 'express';
import { otherMethods } from './error-handler.ts';
import { sendError } from './http-error.ts';

/** Swagger UI's files, served from node_modules: the reference works with no network. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const ASSETS = ['swagger-ui.css', 'index.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'];

/** Only this origin's scripts, styles and requests: no CDN, no inline script, no framing. */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Relative URLs, so the page keeps working behind a proxy that mounts the API under a prefix.
const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Plant Store API reference</title>
    <link rel="stylesheet" href="docs/swagger-ui.css">
    <link rel="stylesheet" href="docs/index.css">
    <link rel="icon" type="image/png" href="docs/favicon-32x32.png" sizes="32x32">
    <link rel="icon" type="image/png" href="docs/favicon-16x16.png" sizes="16x16">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="docs/swagger-ui-bundle.js"></script>
    <script src="docs/init.js"></script>
  </body>
</html>
`;

// The token lives only in the page's memory (persistAuthorization off); no validator badge, which
// would call out to a third party; try-it-out is on, so a reader can send a request at once.
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  deepLinking: true,
  tryItOutEnabled: true,
  persistAuthorization: false,
  displayRequestDuration: true,
  validatorUrl: null,
});
`;

/** Swagger UI's files, read once on first request: most processes never serve the docs. */
const assetCache = new Map<string, Promise<Buffer>>();

const asset =
  (name: string): RequestHandler =>
  (_req, res, next) => {
    let content = assetCache.get(name);
    if (content === undefined) {
      content = readFile(join(SWAGGER_UI_DIR, name));
      assetCache.set(name, content);
    }
    content.then((bytes) => {
      // Swagger UI's assets may be cached, unlike the API's answers.
      res.type(extname(name)).set('Cache-Control', 'public, max-age=3600').send(bytes);
    }, next);
  };

const text =
  (type: string, content: string, headers: Record<string, string> = {}): RequestHandler =>
  (_req, res) => {
    res.type(type).set(headers).send(content);
  };

/**
 * `GET /openapi.json`, the contract's OpenAPI 3.1 document, and `GET /docs`, an interactive
 * reference (Swagger UI) where a reader enters a token and sends requests to this same service.
 * Both are public: the document describes the API, it grants nothing.
 */
export const docsRoutes = (): Router => {
  const router = Router();
  // Generated on first request, not at start: most processes never serve it.
  let document: string | undefined;
  router.get('/openapi.json', (_req, res) => {
    document ??= stringifyOpenApiDocument(createOpenApiDocument());
    res.type('application/json').send(document);
  });
  const page = text('text/html; charset=utf-8', PAGE, { 'Content-Security-Policy': DOCS_CSP });
  router.get('/docs', (req, res, next) => {
    // Relative asset URLs resolve right only from /docs, not /docs/ (which the route also matches).
    if (req.path.endsWith('/')) return sendError(res, 301, 'The reference is at ../docs.', { Location: '../docs' });
    page(req, res, next);
  });
  router.get('/docs/init.js', text('text/javascript; charset=utf-8', INIT_SCRIPT));
  for (const name of ASSETS) router.get(`/docs/${name}`, asset(name));
  router.all(
    ['/openapi.json', '/docs', '/docs/init.js', ...ASSETS.map((name) => `/docs/${name}`)],
    otherMethods(['GET', 'HEAD']),
  );
  return router;
};
