/** @type {import('jest').Config} */
module.exports = {
  // One project per package; each runs its own test folder.
  projects: [
    '<rootDir>/service-kit',
    '<rootDir>/xvfb',
    '<rootDir>/worker',
    '<rootDir>/plugins',
    '<rootDir>/waker',
    '<rootDir>/supervisor',
    '<rootDir>/client',
  ],
  // Integration tests run the built programs as users do: build once, before any test.
  globalSetup: '<rootDir>/jest.global-setup.js',
  // Real browsers and displays: one file at a time in a jest run (`npm test` runs four side by
  // side, scripts/test-lanes.cjs, two of them holding the files that need the Docker engine).
  maxWorkers: 1,
  // Browser tests take seconds; their own deadlines are inside them.
  testTimeout: 120000,
  verbose: true,
  reporters: ['default', '<rootDir>/testkit/summary-reporter.cjs'],
};
