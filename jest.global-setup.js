const { execFileSync } = require('node:child_process');

/**
 * Builds every package (tsc -b) so the tests start the same programs users start; skipped when
 * scripts/test-lanes.cjs built them once for its lanes.
 */
module.exports = function globalSetup() {
  if (process.env.PERSONA_TESTS_BUILT === '1') return;
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], {
    cwd: __dirname,
    stdio: 'inherit',
  });
};
