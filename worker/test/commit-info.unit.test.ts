import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commitFromEnv, readCommit } from '@persona-browser/contracts';

const given = {
  hash: 'abc123',
  subject: 'Fleet: one container per persona',
  date: '2026-11-23T17:00:00.000Z',
};

describe('readCommit', () => {
  const noGit = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-commit-'));

  test('prefers COMMIT_INFO from the environment (a container has no checkout)', async () => {
    await expect(readCommit(noGit, { COMMIT_INFO: JSON.stringify(given) })).resolves.toEqual(given);
  });

  test('normalises the date to ISO 8601 UTC', () => {
    expect(commitFromEnv(JSON.stringify({ ...given, date: '2026-11-23T18:00:00+01:00' }))).toEqual(
      given,
    );
  });

  test('ignores an invalid COMMIT_INFO and falls back to git', async () => {
    for (const bad of [
      'not json',
      '{"hash":"x"}',
      JSON.stringify({ ...given, date: 'yesterday' }),
    ]) {
      expect(commitFromEnv(bad)).toBeNull();
      await expect(readCommit(noGit, { COMMIT_INFO: bad })).resolves.toBeNull();
    }
  });

  test('reads HEAD from git when COMMIT_INFO is unset', async () => {
    const root = path.resolve(__dirname, '..', '..');
    const commit = await readCommit(root, {});
    expect(commit?.hash).toMatch(/^[0-9a-f]{40}$/);
  });
});
