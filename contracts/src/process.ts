import fs from 'node:fs';

/**
 * Process-table facts the waker and the supervisor both need about the programs they start
 * (Linux /proc): whether one still runs, and a signal to its whole process group.
 */

/** Whether `pid` runs (a zombie, dead but not yet reaped, does not). */
export function isAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Sends `signal` to the process group led by `pid`; a group already gone is no error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* the group is gone */
  }
}

/** A pause, for the polls that wait on a process. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * V8 switches for a persona's worker (`node <flags> worker/dist/main.js`), for every way it is
 * started (the process driver, docker/entrypoint.sh, the test kit). V8's young generation
 * grows to two 16 MB halves while the browser starts and does not shrink when the worker goes
 * idle: capped at 2 MB each, an idle worker holds 47 MB instead of 80 (`npm run bench`, memory).
 * One V8 background thread instead of four (for garbage collection and compiling off the main
 * thread), each of which kept memory of its own: node's anonymous memory in an idle container
 * a median 35.7 MB instead of 36.7 (`npm run bench:fleet`, memory); the worker's JavaScript is
 * light next to the browser it drives.
 */
export const WORKER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2', '--v8-pool-size=1'];
