import fs from 'node:fs';
import net from 'node:net';
import { isAlive } from '@persona-browser/contracts';

export { isAlive };

/** Process-table helpers read from /proc (Linux), for what the waker leaves behind. */

function environOf(pid: number): Map<string, string> | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    return new Map(
      text
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
  } catch {
    return null;
  }
}

/** The fields of /proc/<pid>/stat after the command's name: [state, ppid, pgrp, …]. */
function statOf(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * Live processes started for a fleet: the process driver marks each worker's environment, and
 * its Xvfb and Chromium inherit the mark.
 */
export function fleetPids(fleetId: string, persona?: string): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const env = environOf(pid);
    if (!env || env.get('PB_WAKER_FLEET') !== fleetId || !isAlive(pid)) continue;
    if (persona && env.get('PB_WAKER_PERSONA') !== persona) continue;
    out.push(pid);
  }
  return out;
}

/**
 * The worker process itself of one persona, or null while none runs: the leader of its group
 * whose parent is not of the fleet. Its browser leads a group of its own too, as a child of the
 * worker (and may have the lower pid, once pids wrap around).
 */
export function workerPid(fleetId: string, persona: string): number | null {
  const pids = fleetPids(fleetId, persona);
  const ours = new Set(pids);
  return (
    pids.find((pid) => {
      const stat = statOf(pid);
      return stat !== null && Number(stat[2]) === pid && !ours.has(Number(stat[1]));
    }) ?? null
  );
}

/**
 * Resolves once `port` was listened on and closed again: the fleet let go of it (a persona's
 * port still held rejects with EADDRINUSE).
 */
export async function portReleased(port: number | undefined): Promise<void> {
  // Listening on no port would take any free one, and prove nothing.
  if (!port) throw new Error('portReleased: no port given');
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(port, resolve);
  });
  await new Promise((r) => probe.close(r));
}
