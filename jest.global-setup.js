const { execFileSync } = require('node:child_process');

/** Builds every package (tsc -b) so the tests start the same programs users start. */
module.exports = function globalSetup() {
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], {
    cwd: __dirname,
    stdio: 'inherit',
  });
};
