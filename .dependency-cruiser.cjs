/**
 * The product's dependency rules (conventions.md, 9): the worker never reaches into the
 * fleet services, plugins use only the plugin SDK the worker exports, the display module
 * stands alone, and no module imports itself in a cycle.
 */
module.exports = {
  forbidden: [
    {
      name: 'worker-not-fleet',
      severity: 'error',
      comment: 'worker/ never imports waker/ or supervisor/',
      from: { path: '^worker/' },
      to: { path: '^(waker|supervisor)/' },
    },
    {
      name: 'worker-not-plugins',
      severity: 'error',
      comment: 'plugins are discovered at start-up, never imported by the worker',
      from: { path: '^worker/' },
      to: { path: '^plugins/' },
    },
    {
      name: 'plugins-only-sdk',
      severity: 'error',
      comment: 'plugins/ imports only the plugin SDK the worker exports',
      from: { path: '^plugins/' },
      to: { path: '^worker/', pathNot: '^worker/src/sdk(/|\\.ts$)' },
    },
    {
      name: 'xvfb-standalone',
      severity: 'error',
      comment: 'xvfb/ is the display layer: it knows nothing of the worker',
      from: { path: '^xvfb/' },
      to: { path: '^(worker|waker|supervisor|plugins)/' },
    },
    {
      name: 'fleet-not-worker-internals',
      severity: 'error',
      comment: 'waker/ and supervisor/ talk to workers over HTTP, not through their code',
      from: { path: '^(waker|supervisor)/' },
      to: { path: '^worker/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'src-not-tests',
      severity: 'error',
      comment: 'shipped code never imports test helpers',
      from: { path: '/src/' },
      to: { path: '/test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules|coverage)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
