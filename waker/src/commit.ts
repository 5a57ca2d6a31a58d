import { execFile } from 'node:child_process';
import type { CommitInfo } from '@persona-browser/contracts';

/** HEAD of the checkout at `repoRoot`, handed to workers as COMMIT_INFO; null without git. */
export function readGitCommit(repoRoot: string): Promise<CommitInfo | null> {
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
