/**
 * What a worker answers without a browser, printed as one JSON document for the waker:
 *
 *   node worker/dist/startup/describe.js
 *     → {"plugins": <GET /api/v1/plugins>, "docs": {<name>: <README or null>}, "openapi": <doc>}
 *
 * The waker's front door answers these public routes itself while a persona sleeps (a caller
 * reading the plugin list or the API document never wakes one). They depend only on the code and
 * the plugins folder (`PLUGINS_DIR`, as the worker reads it), so they are built here by the
 * worker's own code, the same route tables and discovery, and never drift from what a woken
 * worker answers.
 */
import type { AppDeps } from '../app';
import { allRoutes } from '../app';
import { buildOpenApi } from '../http/openapi';
import { DEFAULT_PLUGINS_DIR, defaultRepoRoot, workerVersion } from '../paths';
import { discoverPlugins, readmeOf } from '../plugins/discover';
import path from 'node:path';

async function describe(): Promise<Record<string, unknown>> {
  const dir = process.env.PLUGINS_DIR
    ? path.resolve(process.env.REPO_ROOT ?? defaultRepoRoot(), process.env.PLUGINS_DIR)
    : DEFAULT_PLUGINS_DIR;
  const found = discoverPlugins(dir);
  const standIns = {
    navigator: { slowmoMs: 0 },
    allowFileUrls: false,
    plugins: { found, env: {}, rngFor: () => () => 0, secrets: {} },
    metrics: {},
  };
  // Route tables read their dependencies only when a request comes: stand-ins do for building
  // the document (as scripts/generate-client.cjs builds it), and no request ever comes here.
  const routes = allRoutes(standIns as unknown as AppDeps);
  const docs: Record<string, string | null> = {};
  for (const p of found.plugins) docs[p.name] = readmeOf(found.root, p);
  return {
    plugins: {
      success: true,
      page_id: null,
      count: found.plugins.length,
      plugins: found.plugins.map((p) => p.descriptor),
      skipped: found.broken,
    },
    docs,
    openapi: await buildOpenApi(routes, workerVersion()),
  };
}

describe().then(
  (doc) => process.stdout.write(`${JSON.stringify(doc)}\n`),
  (err: unknown) => {
    process.stderr.write(`describe: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
