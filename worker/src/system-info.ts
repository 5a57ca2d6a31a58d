import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type Joi from 'joi';
import type { CommitInfo } from '@persona-browser/contracts';
import { commitSchema } from '@persona-browser/contracts';

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
 * The commit this worker runs: `COMMIT_INFO` from the environment when set and valid, else the
 * checkout's HEAD, or null where git or the repository is unavailable.
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

/** The file the waker writes when it gives a persona a proxy identity. */
export const IDENTITY_FILE = 'proxy-identity.json';

/** Browser requests that failed at the proxy; null while the persona has no proxy identity. */
export class ProxyErrors {
  private count = 0;

  constructor(private readonly personaDir: string | null) {}

  record(errorText: string | undefined): void {
    if (errorText && /ERR_(PROXY|TUNNEL)/.test(errorText)) this.count += 1;
  }

  value(): number | null {
    if (!this.personaDir || !fs.existsSync(path.join(this.personaDir, IDENTITY_FILE))) return null;
    return this.count;
  }
}

/** Touches `.update-trigger` at the repository root for the supervisor to pick up. */
export function touchUpdateTrigger(repoRoot: string): string {
  const file = path.join(repoRoot, '.update-trigger');
  fs.writeFileSync(file, `${new Date().toISOString()}\n`);
  return file;
}
