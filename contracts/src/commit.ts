import { execFile } from 'node:child_process';
import type Joi from 'joi';
import type { CommitInfo } from './ping';
import { commitSchema } from './ping';

/**
 * `COMMIT_INFO` (JSON `{hash, subject, date}`), which the waker passes to the workers it starts
 * (a container has no git checkout); null when unset or not a valid commit.
 */
export function commitFromEnv(value: string | undefined): CommitInfo | null {
  if (!value) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  const result: Joi.ValidationResult<CommitInfo> = commitSchema.validate(parsed, {
    convert: false,
  });
  if (result.error) return null;
  const commit = result.value;
  return { ...commit, date: new Date(commit.date).toISOString() };
}

/**
 * The commit a worker or the waker runs: `COMMIT_INFO` from the environment when set and valid
 * (the waker hands it to workers in containers, and may be given it in an image without .git),
 * else HEAD of the checkout at `repoRoot`, or null where git or the repository is unavailable.
 */
export function readCommit(
  repoRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CommitInfo | null> {
  const given = commitFromEnv(env.COMMIT_INFO);
  if (given) return Promise.resolve(given);
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', repoRoot, 'log', '-1', '--format=%H%x00%s%x00%cI'],
      { timeout: 5_000 },
      (err, stdout) => {
        if (err) return resolve(null);
        const [hash, subject, date] = stdout.trim().split('\0');
        if (!hash || !date) return resolve(null);
        resolve({ hash, subject: subject ?? '', date: new Date(date).toISOString() });
      },
    );
  });
}
