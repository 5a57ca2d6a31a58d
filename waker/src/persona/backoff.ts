const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 60_000;
/** A worker up this long resets the crash-loop back-off. */
const STABLE_MS = 60_000;

/**
 * The crash-loop back-off of one persona: failures in a row, and the one timer that starts the
 * worker again. Each failure doubles the wait, up to a minute; a worker that stays up a minute
 * resets the count.
 */
export class RestartBackoff {
  private count = 0;
  private timer: NodeJS.Timeout | null = null;

  get failures(): number {
    return this.count;
  }

  /** A start failed, the worker died, or its health checks failed. */
  failed(): void {
    this.count += 1;
  }

  /** Forgets the failures once the worker has been up long enough. */
  settle(upSince: number, now: number): void {
    if (now - upSince > STABLE_MS) this.count = 0;
  }

  /** The wait before the next start, from the failures so far. */
  delayMs(): number {
    return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, this.count - 1));
  }

  /** Runs `restart` after the wait; null (nothing scheduled) when a restart already waits. */
  schedule(restart: () => void): number | null {
    if (this.timer) return null;
    const delay = this.delayMs();
    this.timer = setTimeout(() => {
      this.timer = null;
      restart();
    }, delay);
    return delay;
  }

  /** Drops a waiting restart (a wake, a stop or a shutdown came first). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
