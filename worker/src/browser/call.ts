import { setMaxListeners } from 'node:events';
import type { CallScope } from '@persona-browser/plugin-sdk';
import type { ApiError } from '../errors';
import { BrowserFailure } from '../errors';

/** Why a call was stopped: the API's envelope with the reason (200 `success: false` by default). */
export class CallStopped extends BrowserFailure {}

/**
 * The deadline and AbortSignal of one call on a page. Everything the call waits on (a sleep, a
 * CDP command, an input step) goes through `sleep` or `race`, so it stops as soon as the
 * deadline passes or the page is poisoned (stuck, crashed, closed), and the page's lock is
 * released at once. The browser-side work of a raced command is not undone; the input
 * executor lifts whatever key or button it held (see executor.ts).
 */
export class Call implements CallScope {
  readonly signal: AbortSignal;
  readonly deadline: number;
  private readonly timer: NodeJS.Timeout;

  /**
   * @param onDeadline the error the call stops with when its time is up
   * @param signals further reasons to stop (the page's own signal)
   */
  constructor(
    deadlineMs: number,
    onDeadline: () => ApiError,
    signals: AbortSignal[] = [],
    private readonly now: () => number = Date.now,
  ) {
    const own = new AbortController();
    this.deadline = now() + deadlineMs;
    this.timer = setTimeout(() => own.abort(onDeadline()), deadlineMs);
    this.timer.unref();
    this.signal = signals.length ? AbortSignal.any([own.signal, ...signals]) : own.signal;
    // Input steps in flight each wait on the signal; they let go as they settle.
    setMaxListeners(0, this.signal);
  }

  /** Stops the deadline timer once the call is over. */
  end(): void {
    clearTimeout(this.timer);
  }

  remainingMs(): number {
    return Math.max(0, this.deadline - this.now());
  }

  throwIfAborted(): void {
    if (this.signal.aborted) throw this.reason();
  }

  sleep(ms: number): Promise<void> {
    return this.race(
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(0, ms));
        this.signal.addEventListener('abort', () => clearTimeout(t), { once: true });
      }),
    );
  }

  /**
   * `work`'s result, or the call's stop reason as soon as the signal fires; a late failure of
   * `work` after that is dropped.
   */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.signal.aborted) {
      work.catch(() => undefined);
      return Promise.reject(this.reason());
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.reason());
      this.signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          this.signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (err: unknown) => {
          this.signal.removeEventListener('abort', onAbort);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  private reason(): Error {
    const r: unknown = this.signal.reason;
    return r instanceof Error ? r : new CallStopped(String(r));
  }
}
