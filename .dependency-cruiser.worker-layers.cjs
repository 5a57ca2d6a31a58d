/**
 * The worker's own layers, top to bottom. A file may import its own layer and any layer below
 * it, never one above: what serves a request sits on what drives the browser, never the reverse.
 *
 *   1. start-up   main.ts, app.ts, config.ts, startup/: the process, its settings and its steps
 *   2. routes     routes/: the REST surface
 *   3. plugins, live view and remote access
 *                 plugins/ (the host that runs plugin code), live/ (VNC and handing control),
 *                 remote/ (outside clients: the DevTools endpoint), recording/ (recordings of
 *                 the screen during plugin calls)
 *   4. calls      human/ (human input), capture/ (network capture), vision/, and http/ (request
 *                 plumbing: auth, route builder, schemas, the fast status answers)
 *   5. browser    browser/: the navigator, the pool, pages and their calls
 *   6. identity   identity/: what the persona shows of itself (platform, locale, proxy relay)
 *   7. devtools   devtools/: everything the worker knows about puppeteer's DevTools
 *                 connection, its private parts included
 *   8. leaves     errors.ts, util.ts, paths.ts, system-info.ts, json-text.ts, log/, media/,
 *                 store/ (dated folders on disk kept within a cap and an age)
 *
 * A file of the worker's src/ outside every layer is an error too: a new folder takes a place.
 */
const SRC = '^worker/src/';

const WORKER_LAYERS = [
  { name: 'start-up', path: `${SRC}((main|app|config)[.]ts$|startup/)` },
  { name: 'routes', path: `${SRC}routes/` },
  { name: 'plugins-live', path: `${SRC}(plugins|live|remote|recording)/` },
  { name: 'calls', path: `${SRC}(human|capture|vision|http)/` },
  { name: 'browser', path: `${SRC}browser/` },
  { name: 'identity', path: `${SRC}identity/` },
  { name: 'devtools', path: `${SRC}devtools/` },
  {
    name: 'leaves',
    path: `${SRC}((errors|util|paths|system-info|json-text)[.]ts$|(log|media|store)/)`,
  },
];

/** One rule per layer below the top: its files import nothing of the layers above it. */
const layerRules = WORKER_LAYERS.slice(1).map((layer, i) => {
  const above = WORKER_LAYERS.slice(0, i + 1);
  return {
    name: `worker-layer-${layer.name}`,
    severity: 'error',
    comment:
      `the worker's ${layer.name} layer imports only its own layer and those below it, ` +
      `never ${above.map((l) => l.name).join(', ')} (see .dependency-cruiser.worker-layers.cjs)`,
    from: { path: layer.path },
    to: { path: above.map((l) => l.path) },
  };
});

const everyFileInALayer = {
  name: 'worker-layer-unplaced',
  severity: 'error',
  comment: "every file of the worker's src/ sits in one of its layers",
  from: { path: SRC, pathNot: WORKER_LAYERS.map((l) => l.path) },
  to: {},
};

module.exports = { WORKER_LAYERS, workerLayerRules: [...layerRules, everyFileInALayer] };
