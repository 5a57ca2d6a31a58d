import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { CommitInfo } from '@persona-browser/contracts';

/** The checkout's HEAD commit, or null where git or the repository is unavailable. */
export function readCommit(repoRoot: string): Promise<CommitInfo | null> {
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
