#!/usr/bin/env node
/**
 * The typed client's declarations (client/src/generated/api.ts) from the worker's OpenAPI
 * document, by openapi-typescript.
 *
 * The document is the one the worker serves at /openapi.json, built the same way without a
 * browser: the worker's route tables (allRoutes) with the plugins discovered in plugins/, through
 * buildOpenApi. Route tables only read their dependencies when a request comes, so stand-ins do
 * for them here. The worker and the plugins must be built first (`npm run build`).
 *
 * Usage: node scripts/generate-client.cjs [--check] [--document <file.json>] [--print-document]
 *   (no flag)         write client/src/generated/api.ts
 *   --check           write nothing; exit 1 when the checked-in file differs from what the
 *                     document gives (the in-step check)
 *   --document FILE   generate from this document (say, one a running worker served) instead
 *   --print-document  print the built document as JSON and stop
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const OUT = path.join(ROOT, 'client', 'src', 'generated', 'api.ts');
const WORKER_DIST = path.join(ROOT, 'worker', 'dist');

/** The OpenAPI document of the current route tables and plugins, as the worker builds it. */
async function buildDocument() {
  const need = (file) => {
    const full = path.join(WORKER_DIST, file);
    if (!fs.existsSync(full)) throw new Error(`${full} is missing: run npm run build first`);
    return require(full);
  };
  const { allRoutes } = need('app.js');
  const { buildOpenApi } = need('http/openapi.js');
  const { discoverPlugins } = need('plugins/discover.js');
  const { DEFAULT_PLUGINS_DIR, workerVersion } = need('paths.js');
  const found = discoverPlugins(DEFAULT_PLUGINS_DIR);
  if (found.broken.length > 0) {
    // A plugin that does not load has no route: generating without it would drop it silently.
    const names = found.broken.map((b) => `${b.name} (${b.error})`).join('; ');
    throw new Error(`plugins that do not load: ${names}`);
  }
  const routes = allRoutes({
    navigator: { slowmoMs: 0 },
    allowFileUrls: false,
    plugins: { found, env: {}, rngFor: () => () => 0, secrets: {} },
    // Every worker serves GET /metrics; its route only needs the metrics when it is called.
    metrics: {},
  });
  return buildOpenApi(routes, workerVersion());
}

/** The declarations file the document gives, formatted as the repository formats TypeScript. */
async function generate(document) {
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const prettier = require('prettier');
  const ast = await openapiTS(document, { silent: true });
  const text = COMMENT_HEADER + astToString(ast);
  const options = (await prettier.resolveConfig(OUT)) ?? {};
  return prettier.format(text, { ...options, filepath: OUT });
}

/** The first line where two texts part, for the failure message. */
function firstDifference(a, b) {
  const left = a.split('\n');
  const right = b.split('\n');
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    if (left[i] !== right[i]) {
      return `line ${i + 1}: checked in ${JSON.stringify(left[i] ?? '(end of file)')}, routes give ${JSON.stringify(right[i] ?? '(end of file)')}`;
    }
  }
  return 'no line differs';
}

async function main(argv) {
  const at = argv.indexOf('--document');
  const documentFile = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && !documentFile) throw new Error('--document needs a file');
  const document = documentFile
    ? JSON.parse(fs.readFileSync(documentFile, 'utf8'))
    : await buildDocument();
  if (argv.includes('--print-document')) {
    process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    return 0;
  }
  const text = await generate(document);
  const relative = path.relative(ROOT, OUT);
  if (argv.includes('--check')) {
    const current = fs.existsSync(OUT) ? fs.readFileSync(OUT, 'utf8') : '';
    if (current === text) {
      process.stdout.write(`${relative} is in step with the routes\n`);
      return 0;
    }
    process.stderr.write(
      `${relative} is out of step with the routes (${firstDifference(current, text)}): ` +
        'run npm run client:generate\n',
    );
    return 1;
  }
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, text);
  process.stdout.write(`wrote ${relative}\n`);
  return 0;
}

// exitCode, not exit(): a large document printed to a pipe is still being written.
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`generate-client: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
