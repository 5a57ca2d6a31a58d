/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/worker', '<rootDir>/xvfb'],
  testMatch: ['**/*.test.ts'],
  // With isolatedModules (tsconfig.json) ts-jest transpiles file by file; type checking is
  // `npm run lint`'s job.
  transform: { '^.+\\.ts$': 'ts-jest' },
  globalSetup: '<rootDir>/worker/test/helpers/global-setup.ts',
  testTimeout: 120000,
  // Real browsers and displays: one file at a time keeps a 2-core machine honest.
  maxWorkers: 1,
  verbose: true,
  reporters: ['default', '<rootDir>/worker/test/helpers/summary-reporter.cjs'],
};
