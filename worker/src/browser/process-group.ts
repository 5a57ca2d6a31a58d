import fs from 'node:fs';

/**
 * How many processes of the process group `pgid` still run (zombies, which have ended and wait
 * to be reaped, are not counted). Read from `/proc`; 0 where it cannot be read.
 */
export function runningInGroup(pgid: number): number {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return 0;
  }
  let count = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // `pid (comm) state ppid pgrp …`: the command may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') count += 1;
  }
  return count;
}

/** Waits until no process of group `pgid` runs, or `until` (epoch ms); true when none runs. */
export async function groupEnded(pgid: number, until: number): Promise<boolean> {
  for (;;) {
    if (runningInGroup(pgid) === 0) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
