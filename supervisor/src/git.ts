import type { CommitInfo } from '@persona-browser/contracts';
import { run } from './run';
import type { RunAs } from './run';

/** What the supervisor asks of the checkout, one git command each. */
export class Git {
  constructor(
    private readonly dir: string,
    private readonly as: RunAs | null = null,
  ) {}

  /** Runs git in the checkout; its output as it printed it. */
  private raw(args: string[], timeoutMs = 60_000): Promise<string> {
    // No prompt for credentials: a remote that needs them fails at once with git's message.
    const env = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
    return run('git', ['-C', this.dir, ...args], { cwd: this.dir, env, timeoutMs, as: this.as });
  }

  private async git(args: string[], timeoutMs?: number): Promise<string> {
    return (await this.raw(args, timeoutMs)).trim();
  }

  head(): Promise<string> {
    return this.git(['rev-parse', 'HEAD']);
  }

  /** The upstream of the checked-out branch (`origin/main`), or null without one. */
  async upstream(): Promise<string | null> {
    try {
      return await this.git(['rev-parse', '--abbrev-ref', '--symbolic-full-name', '@{upstream}']);
    } catch {
      return null;
    }
  }

  /** The branch checked out, or null on a detached HEAD. */
  async branch(): Promise<string | null> {
    const name = await this.git(['rev-parse', '--abbrev-ref', 'HEAD']);
    return name === 'HEAD' ? null : name;
  }

  /** The remote an upstream lives on (`origin` of `origin/main`). */
  static remoteOf(upstream: string): string {
    return upstream.slice(0, upstream.indexOf('/'));
  }

  /** Fetches the upstream's remote and answers the upstream's commit. */
  async fetch(upstream: string): Promise<string> {
    await this.git(['fetch', '--quiet', '--prune', Git.remoteOf(upstream)], 120_000);
    return this.git(['rev-parse', upstream]);
  }

  /** A remote's URL as configured. */
  remoteUrl(remote: string): Promise<string> {
    return this.git(['remote', 'get-url', remote]);
  }

  /** Asks the remote for its HEAD and nothing more: rejects with git's reason when it cannot. */
  async reach(remote: string, timeoutMs: number): Promise<void> {
    await this.raw(['ls-remote', remote, 'HEAD'], timeoutMs);
  }

  /** Tracked files changed but not committed (untracked files are left alone by an update). */
  async dirty(): Promise<string[]> {
    const out = await this.raw(['status', '--porcelain', '-z', '--untracked-files=no']);
    return out
      .split('\0')
      .filter((entry) => entry.length > 3)
      .map((entry) => entry.slice(3));
  }

  /** Commits on HEAD that `upstream` does not have. */
  async localCommits(upstream: string): Promise<number> {
    return Number(await this.git(['rev-list', '--count', `${upstream}..HEAD`]));
  }

  async isAncestor(older: string, newer: string): Promise<boolean> {
    try {
      await this.git(['merge-base', '--is-ancestor', older, newer]);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Moves the branch (and the working tree) to `hash`: a fast-forward when it lies ahead, else
   * `reset --keep`, which refuses rather than lose a local change.
   */
  async moveTo(hash: string): Promise<void> {
    const head = await this.head();
    if (head === hash) return;
    if (await this.isAncestor(head, hash)) await this.git(['merge', '--ff-only', '--quiet', hash]);
    else await this.git(['reset', '--keep', hash]);
  }

  /** Whether any of `paths` differs between two commits. */
  async changed(from: string, to: string, paths: string[]): Promise<boolean> {
    const out = await this.git(['diff', '--name-only', from, to, '--', ...paths]);
    return out.length > 0;
  }

  async info(hash: string): Promise<CommitInfo> {
    const [h = '', subject = '', date = ''] = (
      await this.git(['log', '-1', '--format=%H%x00%s%x00%cI', hash])
    ).split('\0');
    return { hash: h, subject, date: new Date(date).toISOString() };
  }

  /** Every file of the working tree that git does not ignore, tracked or not (root-relative). */
  async workingFiles(): Promise<string[]> {
    const out = await this.raw(['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
    return out.split('\0').filter(Boolean);
  }
}
