import { execFile } from 'node:child_process';
import type Joi from 'joi';
import type { CommitInfo } from '@persona-browser/contracts';
import { commitSchema } from '@persona-browser/contracts';

/** `COMMIT_INFO` (JSON `{hash, subject, date}`) when set and valid, else null. */
export function commitFromEnv(value: string | undefined): CommitInfo | null {
  if (!value) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return null;
  }
  const result: Joi.ValidationResult<CommitInfo> = commitSchema.validate(parsed);
  return result.error ? null : result.value;
}

/**
 * The commit handed to workers as COMMIT_INFO: the waker's own `COMMIT_INFO` when given (an
 * image built without its .git), else HEAD of the checkout at `repoRoot`, else null.
 */
export function readOwnCommit(
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
