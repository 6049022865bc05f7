import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createOpenApiDocument, stringifyOpenApiDocument } from '@org/plant-contract';
import { type RequestHandler, Router } from 'express';
import { otherMethods } from './error-handler.ts';

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

const html: RequestHandler = (req, res) => {
  // Relative asset URLs resolve right only from /docs, not /docs/.
  if (req.path.endsWith('/')) return res.redirect(301, '../docs');
  res.set('Content-Security-Policy', DOCS_CSP).type('html').send(PAGE);
};

/**
 * `GET /openapi.json`, the contract's OpenAPI 3.1 document, and `GET /docs`, an interactive
 * reference (Swagger UI) where a reader enters a token and sends requests to this same service.
 * Both are public: the document describes the API, it grants nothing.
 */
export const docsRoutes = (): Router => {
  const documentText = stringifyOpenApiDocument(createOpenApiDocument());
  const router = Router();

  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(documentText);
  });
  router.get('/docs', html);
  router.get('/docs/init.js', (_req, res) => {
    res.type('text/javascript').send(INIT_SCRIPT);
  });
  for (const asset of ASSETS) {
    router.get(`/docs/${asset}`, (_req, res, next) => {
      res.set('Cache-Control', 'public, max-age=3600');
      res.sendFile(join(SWAGGER_UI_DIR, asset), (error) => error && next(error));
    });
  }
  const paths = ['/openapi.json', '/docs', '/docs/init.js', ...ASSETS.map((asset) => `/docs/${asset}`)];
  router.all(paths, otherMethods(['GET', 'HEAD']));
  return router;
};
