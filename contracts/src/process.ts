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
