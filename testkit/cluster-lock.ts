import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

const LOCK_FILE = '/tmp/persona-browser-swarm.lock';

/** A hold on the machine's cluster lock; `release()` once, when the cluster is gone. */
export interface ClusterLock {
  release(): void;
}

/** This process's own hold, shared by its holders (a second cluster of one test, refused). */
let held: { child: Promise<ChildProcess>; holders: number } | null = null;

/**
 * The manager is this machine's one engine, so one cluster at a time: test processes (and
 * worktrees) queue on a lock file. A `flock` child holds it while its stdin stays open; it ends
 * with this process, so a crashed test never leaves the lock taken. Within one process the hold
 * is shared: a second start there must reach the engine's own refusal, not wait on itself.
 */
export async function holdClusterLock(timeoutMs = 30 * 60_000): Promise<ClusterLock> {
  if (!held) {
    const child = acquire(timeoutMs);
    held = { child, holders: 0 };
    child.catch(() => {
      held = null;
    });
  }
  const mine = held;
  mine.holders += 1;
  const child = await mine.child;
  let released = false;
  return {
    release: () => {
      if (released) return;
      released = true;
      mine.holders -= 1;
      if (mine.holders > 0) return;
      child.kill();
      if (held === mine) held = null;
    },
  };
}

function acquire(timeoutMs: number): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn('flock', [LOCK_FILE, 'sh', '-c', 'echo held; exec cat'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`another Swarm cluster test held ${LOCK_FILE} for ${timeoutMs} ms`));
    }, timeoutMs);
    child.stdout?.once('data', () => {
      clearTimeout(timer);
      resolve(child);
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`flock on ${LOCK_FILE} exited with ${code}`));
    });
  });
}
