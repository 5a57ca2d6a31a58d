import type { SleepDepth } from '@persona-browser/contracts';

/**
 * The ladder an idle persona goes down: awake → paused → light → deep, each rung after its own
 * time. Pause needs a driver that can freeze a worker (not a Swarm) and `WAKER_PAUSE_SECONDS`
 * above 0; light sleep needs `LIGHT_SLEEP_SECONDS` above 0. A rung that does not apply is
 * skipped, so with neither an idle persona stops as it always did.
 */
export interface LadderSettings {
  /** Seconds a paused worker stays paused before it goes lighter-down (0: no pause). */
  pauseSeconds: number;
  /** Whether the driver can pause a worker. */
  canPause: boolean;
  /** Seconds in light sleep before the worker is stopped (0: no light sleep). */
  lightSleepSeconds: number;
}

/** What the ladder reads of a persona at one look. */
export interface LadderView {
  /** Only a sleepy persona falls asleep by itself; any persona put to a depth goes on down. */
  sleepy: boolean;
  /** Seconds without a request before a sleepy persona sleeps (IDLE_TIMEOUT). */
  idleTimeoutS: number | null;
  /** A request, a live view or a lease: nothing moves. */
  busy: boolean;
  /** Its worker serves (running, neither paused nor light). */
  serving: boolean;
  /** The depth its kept worker sleeps at, or null (serving, or no worker). */
  kept: Exclude<SleepDepth, 'deep'> | null;
  /** Milliseconds since the last request ended. */
  idleMs: number;
  /** Milliseconds since it went to the depth it is at. */
  atDepthMs: number;
}

/** The first depth an idle persona goes to, and the one after `depth`. */
export function deeper(depth: SleepDepth | null, s: LadderSettings): SleepDepth {
  if (depth === null && s.canPause && s.pauseSeconds > 0) return 'paused';
  if ((depth === null || depth === 'paused') && s.lightSleepSeconds > 0) return 'light';
  return 'deep';
}

/** The step down the ladder due now, or null. */
export function ladderStep(v: LadderView, s: LadderSettings): SleepDepth | null {
  if (v.busy) return null;
  if (v.serving) {
    if (!v.sleepy || v.idleTimeoutS === null) return null;
    return v.idleMs >= v.idleTimeoutS * 1000 ? deeper(null, s) : null;
  }
  // A depth whose time is 0 was asked for by the API: the persona stays there until called.
  if (v.kept === 'paused' && s.pauseSeconds > 0)
    return v.atDepthMs >= s.pauseSeconds * 1000 ? deeper('paused', s) : null;
  if (v.kept === 'light' && s.lightSleepSeconds > 0)
    return v.atDepthMs >= s.lightSleepSeconds * 1000 ? 'deep' : null;
  return null;
}
