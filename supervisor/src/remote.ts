import type { SupervisorRemote } from '@persona-browser/contracts';
import { errorMessage } from '@persona-browser/service-kit';
import { Git } from './git';
import type { UpdateLog } from './log';
import { CommandError, redactCredentials } from './run';

/** How long the remote has to answer `git ls-remote` (a fetch has its own, longer, limit). */
const REACH_TIMEOUT_MS = 20_000;

/** git's own words for a failure (its whole message), or the error's. */
const reason = (err: unknown): string =>
  err instanceof CommandError && err.detail ? err.detail : errorMessage(err);

/**
 * Whether the upstream's remote can be reached from where the supervisor runs, for the status:
 * asked at start and after a failed fetch, and known reachable after every fetch that worked.
 * A change is said once in the update log.
 */
export class RemoteWatch {
  private now: SupervisorRemote = { url: null, reachable: null, checked_at: null, error: null };
  private asking: Promise<void> | null = null;

  constructor(
    private readonly git: Git,
    private readonly log: UpdateLog,
  ) {}

  get(): SupervisorRemote {
    return { ...this.now };
  }

  /** Asks the upstream's remote now (one question at a time); never rejects. */
  check(upstream: string | null): Promise<void> {
    this.asking ??= this.ask(upstream).finally(() => {
      this.asking = null;
    });
    return this.asking;
  }

  /**
   * Fetches the upstream (Git.fetch) and keeps the status true to it: a fetch that worked
   * reached the remote; one that failed has the remote asked again, then rejects as it did.
   */
  async fetch(upstream: string): Promise<string> {
    try {
      const target = await this.git.fetch(upstream);
      await this.set(upstream, null);
      return target;
    } catch (err) {
      await this.check(upstream);
      throw err;
    }
  }

  private async ask(upstream: string | null): Promise<void> {
    if (!upstream) {
      this.now = { url: null, reachable: null, checked_at: null, error: null };
      return;
    }
    let error: string | null = null;
    try {
      await this.git.reach(Git.remoteOf(upstream), REACH_TIMEOUT_MS);
    } catch (err) {
      error = reason(err);
    }
    await this.set(upstream, error);
  }

  private async set(upstream: string, error: string | null): Promise<void> {
    const remote = Git.remoteOf(upstream);
    const url = await this.git.remoteUrl(remote).then(redactCredentials, () => null);
    const before = this.now.reachable;
    this.now = { url, reachable: error === null, checked_at: new Date().toISOString(), error };
    const where = `the remote ${remote}${url ? ` (${url})` : ''}`;
    if (error !== null && before !== false) {
      this.log.error(`${where} cannot be reached from here: ${error}`);
    } else if (error === null && before !== true) {
      this.log.info(`${where} is reachable`);
    }
  }
}
