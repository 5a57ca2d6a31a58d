const path = require('node:path');

/**
 * The jest settings every package shares. With isolatedModules, ts-jest transpiles file by
 * file; type checking is `npm run lint`'s job (tsconfig.check.json).
 */
module.exports = (dir, name) => ({
  displayName: name,
  rootDir: dir,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.check.json') }],
  },
});
