/**
 * The product's dependency rules (docs/architecture.md), written against package names: a package
 * reaches another only through its name (never a relative path into its folder), plugins see
 * only the plugin SDK, the worker never imports the fleet services, and nothing imports itself
 * in a cycle, and shipped code never imports the test kit. Workspace packages resolve to node_modules/@persona-browser/<name> (symlinks
 * kept), or stay unresolved while a package has no build.
 */
const { workerLayerRules } = require('./.dependency-cruiser.worker-layers.cjs');

const PKG = '(^|node_modules/)@persona-browser/';
const FOLDERS = [
  'contracts',
  'service-kit',
  'plugin-sdk',
  'ui',
  'xvfb',
  'mcp',
  'worker',
  'plugins',
  'waker',
  'supervisor',
  'client',
  'testkit',
];

/**
 * One rule per package: its files reach other packages' folders only by package name, tests
 * too (what they share is the test kit, @persona-browser/testkit). A panel's browser modules import ui/ by the URL the service serves it at (/ui/…), not by name.
 */
const noRelativeEscapes = FOLDERS.map((folder) => ({
  name: `${folder}-by-name-only`,
  severity: 'error',
  comment: `${folder}/ imports other packages by name, not by a path into their folders`,
  from: { path: `^${folder}/`, pathNot: `^${folder}/panel/` },
  to: { path: `^(${FOLDERS.filter((f) => f !== folder).join('|')})/` },
}));

/**
 * The directions between the folders of one package: [rule, from, to, why]. A folder on the
 * right is one the folder on the left never imports (the reverse is how they are used).
 */
const folderRules = [
  [
    'worker-identity-not-browser',
    '^worker/src/identity/',
    '^worker/src/browser/',
    "the worker's identity/ (what the persona shows of itself) is worn by browser/, and " +
      'reaches the browser only through devtools/: it imports nothing of browser/',
  ],
  [
    'worker-recording-not-plugins',
    '^worker/src/recording/',
    '^worker/src/plugins/',
    'recording/ records plugin calls and leases for the plugin host: it imports nothing ' +
      'of plugins/ (the dated-folder store both use is store/)',
  ],
  [
    'worker-store-stands-alone',
    '^worker/src/store/',
    '^worker/src/(?!store/)',
    "the worker's store/ (dated folders kept within a cap and an age) knows none of what " +
      'is stored in it: it imports nothing else of worker/src/',
  ],
  [
    'waker-drivers-know-no-persona',
    '^waker/src/drivers/',
    '^waker/src/(persona|placement|memory)/',
    "the waker's runtime drivers start, stop and place workers: they import nothing of " +
      'persona/, placement/ or memory/, which sit on them',
  ],
  [
    'waker-placement-below-persona',
    '^waker/src/placement/',
    '^waker/src/(persona|memory)/',
    "the waker's placement/ (a persona's node, its connections, a move) is used by a " +
      "persona's lifecycle: it imports nothing of persona/ or memory/",
  ],
  [
    'waker-persona-not-memory',
    '^waker/src/persona/',
    '^waker/src/memory/',
    'the memory budget sits on the personas (it reads their activity and puts them to ' +
      "sleep) and reaches a start only through the persona's admit hook: persona/ imports " +
      'nothing of memory/',
  ],
].map(([name, from, to, comment]) => ({
  name,
  severity: 'error',
  comment,
  from: { path: from },
  to: { path: to },
}));

/** A package that imports none of ours (what it is, and why, in `comment`). */
const standsAlone = (name, from, comment) => ({
  name,
  severity: 'error',
  comment,
  from,
  to: { path: PKG },
});

module.exports = {
  forbidden: [
    standsAlone(
      'sdk-stands-alone',
      { path: '^plugin-sdk/' },
      'the plugin SDK is types and interfaces: it imports none of our packages',
    ),
    standsAlone(
      'contracts-stand-alone',
      { path: '^contracts/' },
      'the wire contracts import none of our packages',
    ),
    standsAlone(
      'service-kit-stands-alone',
      { path: '^service-kit/' },
      "the services' shared kit (auth, env, logger, lifecycle) imports none of our packages",
    ),
    standsAlone(
      'ui-stands-alone',
      { path: '^ui/' },
      "ui/ is the panels' shared stylesheet and browser helpers: it imports nothing of ours",
    ),
    standsAlone(
      'xvfb-standalone',
      { path: '^xvfb/' },
      'xvfb/ is the display layer: it knows nothing of the worker or the fleet',
    ),
    standsAlone(
      'client-stands-alone',
      { path: '^client/', pathNot: '^client/test/' },
      'client/ is what users install: it imports none of our packages',
    ),
    ...noRelativeEscapes,
    ...workerLayerRules,
    ...folderRules,
    {
      name: 'worker-not-fleet',
      severity: 'error',
      comment: 'the worker never imports the waker or the supervisor',
      from: { path: '^worker/' },
      to: { path: `${PKG}(waker|supervisor)(/|$)` },
    },
    {
      name: 'worker-not-plugins',
      severity: 'error',
      comment: 'plugins are discovered at start-up, never imported by the worker',
      from: { path: '^worker/' },
      to: { path: `${PKG}plugins(/|$)` },
    },
    {
      name: 'plugins-only-sdk',
      severity: 'error',
      comment:
        'a plugin imports the plugin SDK and files of plugins/ only: no other package of ours, ' +
        'no npm package, no Node built-in (the SDK is all a plugin may reach)',
      from: { path: '^plugins/', pathNot: '^plugins/(test/|jest[.]config[.]js$)' },
      to: { pathNot: `^plugins/|${PKG}plugin-sdk(/|$)` },
    },
    {
      name: 'mcp-through-client',
      severity: 'error',
      comment:
        'mcp/ turns the REST API into tools: it reaches a persona through @persona-browser/client ' +
        '(typed answers), so it imports no service of ours (only the shared kit and the client)',
      from: { path: '^mcp/' },
      to: { path: `${PKG}(worker|plugins|plugin-sdk|waker|supervisor|xvfb|ui)(/|$)` },
    },
    {
      name: 'mcp-no-own-http',
      severity: 'error',
      comment:
        "mcp/ makes no HTTP request of its own: the client's transport (httpTransport) carries " +
        'every call, typed or by path, with its deadline',
      from: { path: '^mcp/src/' },
      to: {
        dependencyTypes: ['core'],
        dependencyTypesNot: ['type-only'],
        path: '^(node:)?(http|https|net)$',
      },
    },
    {
      name: 'client-tests-over-http',
      severity: 'error',
      comment:
        "client/'s tests start a real worker through the test kit and call it over HTTP: no " +
        'other package of ours',
      from: { path: '^client/test/' },
      to: { path: PKG, pathNot: `${PKG}testkit(/|$)` },
    },
    {
      name: 'fleet-not-worker-internals',
      severity: 'error',
      comment: 'the waker and the supervisor talk to workers over HTTP and the contracts',
      from: { path: '^(waker|supervisor)/' },
      to: { path: `${PKG}(worker|plugins|plugin-sdk)(/|$)` },
    },
    {
      name: 'fleet-worker-calls-without-own-http',
      severity: 'error',
      comment:
        "the waker's and the supervisor's calls of a worker's REST API go through the client " +
        '(see required: fleet-calls-workers-through-client), never a request of their own',
      from: { path: '^(waker/src/worker-client|supervisor/src/health)[.]ts$' },
      to: {
        dependencyTypes: ['core'],
        dependencyTypesNot: ['type-only'],
        path: '^(node:)?(http|https|net)$',
      },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-dev-code',
      severity: 'error',
      comment: 'shipped code never imports tests, the test kit or benchmarks',
      from: { path: '/src/' },
      to: { path: ['/(test|testkit|bench)/', `${PKG}testkit(/|$)`] },
    },
    {
      name: 'declared-dependencies',
      severity: 'error',
      comment: 'shipped code imports only what its package.json declares',
      from: { path: '/src/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
  ],
  required: [
    {
      name: 'mcp-calls-through-client',
      severity: 'error',
      comment: "mcp/'s calls of a persona (rest.ts, every tool's target) are the client's",
      module: { path: '^mcp/src/rest[.]ts$' },
      to: { path: `${PKG}client(/|$)` },
    },
    {
      name: 'fleet-calls-workers-through-client',
      severity: 'error',
      comment:
        "the waker's calls of a worker (status, ping, browser start and stop) and the " +
        "supervisor's health pings go through @persona-browser/client",
      module: { path: '^(waker/src/worker-client|supervisor/src/health)[.]ts$' },
      to: { path: `${PKG}client(/|$)` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(coverage|[a-z-]+/dist|[a-z-]+/dist-bench)/' },
    preserveSymlinks: true,
    combinedDependencies: false,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.check.json' },
  },
};
