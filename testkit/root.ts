import path from 'node:path';

/**
 * The repository the tests and benchmarks run from. The kit always runs built, from
 * `testkit/dist/`, so the root is two folders up.
 */
export const ROOT = path.resolve(__dirname, '..', '..');
