/**
 * The waits of a page call, in one place. The API fixes the defaults (a call waits 30 s for its
 * page before 409; a navigation pauses about 2 s, then gives up at 60 s with 408); the settings
 * LOCK_WAIT_SECONDS, NAVIGATION_TIMEOUT_SECONDS and CALL_DEADLINE_SECONDS change them for a slow
 * machine, and let tests measure the rules without waiting out a minute; NAVIGATE_PAUSE_MS
 * shortens (or drops, at 0) the pause for a persona that only visits sites of its own.
 */
export interface PageTiming {
  /** How long a call waits for the page's previous call before answering 409. */
  lockWaitMs: number;
  /** How long a call may work once it holds its page (navigate and reload excepted). */
  callDeadlineMs: number;
  /** How long a navigation may take before 408. */
  navigationTimeoutMs: number;
  /**
   * The pause a navigate call makes before it starts, like a person reaching for the address
   * bar; paid give or take 10 % (0: none).
   */
  navigatePauseMs: number;
}

export const DEFAULT_TIMING: PageTiming = {
  lockWaitMs: 30_000,
  callDeadlineMs: 120_000,
  navigationTimeoutMs: 60_000,
  navigatePauseMs: 2_000,
};

/** A navigate or reload call may hold its page for the pause, the navigation and a margin. */
export const navigationDeadlineMs = (t: PageTiming): number =>
  t.navigatePauseMs * 1.1 + t.navigationTimeoutMs + 8_000;

/**
 * A typing or scrolling plan is refused up front (400) when it would take longer than this:
 * the call's deadline less room for the approach, the slowmo pause and the answer.
 */
export const planBudgetMs = (t: PageTiming): number => Math.floor(t.callDeadlineMs * 0.8);
