import path from 'node:path';
import express from 'express';
import type { Router } from 'express';

const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const redocBundle = require.resolve('redoc/bundles/redoc.standalone.js');

const swaggerPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>persona-browser API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

// validatorUrl null: no badge fetched from the internet (users run this on closed networks).
const swaggerInit = `window.ui = SwaggerUIBundle({
  url: '/openapi.json', dom_id: '#swagger-ui', validatorUrl: null,
  deepLinking: true, persistAuthorization: true });`;

const redocPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>persona-browser API (ReDoc)</title>
<style>body{margin:0}</style></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script></body></html>`;

/**
 * The browser may load nothing from elsewhere: users run this on closed networks, and a bundle
 * that reaches for a CDN (ReDoc's footer logo does) must fail closed, not leak a request.
 */
export const LOCAL_ONLY_CSP = [
  "default-src 'self'",
  "img-src 'self' data: blob:",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
].join('; ');

export const localOnly: express.RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', LOCAL_ONLY_CSP);
  next();
};

/** OpenAPI JSON, Swagger UI and ReDoc, every asset served from node_modules (no CDN). */
export function docsRouter(openApi: () => Promise<Record<string, unknown>>): Router {
  const router = express.Router();
  router.use(['/docs', '/redoc'], localOnly);
  router.get(['/openapi.json', '/api/v1/openapi.json'], (_req, res, next) => {
    openApi().then((doc) => res.json(doc), next);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(swaggerPage);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('js').send(swaggerInit);
  });
  router.use('/docs/assets', express.static(swaggerDir, { index: false }));
  router.get('/redoc', (_req, res) => {
    res.type('html').send(redocPage);
  });
  router.get('/redoc/redoc.standalone.js', (_req, res) => {
    res.sendFile(redocBundle);
  });
  return router;
}
