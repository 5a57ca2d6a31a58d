import type { Answer, Result } from './result';
import { settle } from './result';

/** The status of "page busy past the wait timeout": another call held the page all along. */
export const BUSY = 409;

export interface BusyWaitOptions {
  /** No new attempt starts after this moment (epoch ms, or a Date). */
  until: number | Date;
  /** The pause after the first 409, doubled after each next one up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
  /** Told of each 409 before the pause that follows it. */
  onBusy?: (attempt: number, delayMs: number) => void;
  /** Stops waiting (the last answer is returned). */
  signal?: AbortSignal;
}

const pause = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });

/**
 * Runs `attempt` until it gets an answer other than 409, pausing between attempts with
 * back-off; past the deadline the last 409 is the result. The worker itself already waits
 * (LOCK_WAIT_SECONDS) before answering 409, so this is for callers who would rather wait longer
 * than give up. `attempt` must make a new request each time: `() => pb.POST(…)`.
 */
export async function untilFree<D>(
  attempt: () => Promise<Answer<D>>,
  options: BusyWaitOptions,
): Promise<Result<D>> {
  const until = options.until instanceof Date ? options.until.getTime() : options.until;
  const maxDelay = options.maxDelayMs ?? 2_000;
  let delay = options.firstDelayMs ?? 200;
  for (let n = 1; ; n += 1) {
    const result = await settle(attempt());
    if (result.ok || result.status !== BUSY || options.signal?.aborted) return result;
    const wait = Math.min(delay, until - Date.now());
    if (wait < 0) return result;
    options.onBusy?.(n, wait);
    await pause(wait, options.signal);
    if (options.signal?.aborted) return result;
    delay = Math.min(delay * 2, maxDelay);
  }
}
