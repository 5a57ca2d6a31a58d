const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 60_000;
/** A worker up this long resets the crash-loop back-off. */
const STABLE_MS = 60_000;

/**
 * The back-off of one persona: failures in a row (starts, stops, deaths), and the one timer
 * that tries again. Each failure doubles the wait, up to a minute; a worker that stays up a minute
 * resets the count.
 */
export class RestartBackoff {
  private count = 0;
  private timer: NodeJS.Timeout | null = null;
  private due: number | null = null;

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

  /** When the next try runs (epoch ms), null when none waits. */
  get dueAt(): number | null {
    return this.due;
  }

  /** Whole seconds until the next try (at least 1): a refused client's `Retry-After`. */
  retryAfterS(now = Date.now()): number {
    const wait = this.due !== null ? this.due - now : this.delayMs();
    return Math.max(1, Math.ceil(wait / 1000));
  }

  /** Runs `retry` after the wait; null (nothing scheduled) when a try already waits. */
  schedule(retry: () => void): number | null {
    if (this.timer) return null;
    const delay = this.delayMs();
    this.due = Date.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.due = null;
      retry();
    }, delay);
    return delay;
  }

  /** Drops a waiting restart (a wake, a stop or a shutdown came first). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.due = null;
  }
}
