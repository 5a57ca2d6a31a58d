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

/** OpenAPI JSON, Swagger UI and ReDoc, every asset served from node_modules (no CDN). */
export function docsRouter(openApi: () => Record<string, unknown>): Router {
  const router = express.Router();
  router.get(['/openapi.json', '/api/v1/openapi.json'], (_req, res) => {
    res.json(openApi());
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
