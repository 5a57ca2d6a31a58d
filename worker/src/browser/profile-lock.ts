import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { errnoCode } from '@persona-browser/service-kit';

export class ProfileInUse extends Error {}

/** The file by which a worker holds its profile: `{host, pid}` of the worker process. */
const WORKER_LOCK = 'WorkerLock';
/** How long a browser left by a dead worker gets to exit by itself before it is killed. */
const ORPHAN_GRACE_MS = 5_000;

interface Holder {
  host: string;
  pid: number;
}

/** A live process on this host; a zombie (exited, not yet reaped) counts as gone. */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (errnoCode(err) !== 'EPERM') return false;
  }
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

function readWorkerLock(profileDir: string): Holder | null {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(path.join(profileDir, WORKER_LOCK), 'utf8'));
    if (typeof v !== 'object' || v === null || !('pid' in v) || !('host' in v)) return null;
    return typeof v.pid === 'number' && typeof v.host === 'string'
      ? { host: v.host, pid: v.pid }
      : null;
  } catch {
    return null;
  }
}

/** The browser holding the profile by Chromium's own lock (`SingletonLock` → `host-pid`). */
function browserHolder(profileDir: string): Holder | null {
  try {
    const m = /^(.*)-(\d+)$/.exec(fs.readlinkSync(path.join(profileDir, 'SingletonLock')));
    const [, host, pid] = m ?? [];
    return host !== undefined && pid !== undefined ? { host, pid: Number(pid) } : null;
  } catch {
    return null;
  }
}

const liveHere = (h: Holder | null): h is Holder =>
  h !== null && h.host === os.hostname() && pidAlive(h.pid);

/** Live processes whose command line opens this profile: a browser and its helpers. */
function browserProcesses(profileDir: string): number[] {
  const flag = `--user-data-dir=${profileDir}`;
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv.includes(flag) && pidAlive(Number(entry))) out.push(Number(entry));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Makes the profile this worker's before its browser starts:
 * - a profile held by another live worker on this host is refused (never taken from it);
 * - a browser left by a dead worker (it outlived it, or is still closing) gets a moment to
 *   exit, then is killed, so a worker killed outright can be started again at once;
 * - a browser that no worker started (a person's own Chromium on this profile) is refused;
 * - Chromium's `Singleton*` files of a browser that is gone are removed (a crash, or a profile
 *   moved from another machine or container), and this worker's lock is written.
 */
export async function claimProfile(profileDir: string): Promise<void> {
  fs.mkdirSync(profileDir, { recursive: true });
  const owner = readWorkerLock(profileDir);
  if (owner && owner.pid !== process.pid && liveHere(owner)) {
    throw new ProfileInUse(
      `profile ${profileDir} is in use by the worker with pid ${owner.pid}; stop it first`,
    );
  }
  const browser = browserHolder(profileDir);
  if (liveHere(browser)) {
    if (!owner || owner.host !== os.hostname()) {
      throw new ProfileInUse(
        `profile ${profileDir} is in use by a browser no worker started (pid ${browser.pid})`,
      );
    }
    const until = Date.now() + ORPHAN_GRACE_MS;
    while (pidAlive(browser.pid) && Date.now() < until) await sleep(100);
    for (const pid of browserProcesses(profileDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
    while (browserProcesses(profileDir).length && Date.now() < until + ORPHAN_GRACE_MS) {
      await sleep(50);
    }
  }
  for (const name of ['SingletonLock', 'SingletonSocket', 'SingletonCookie']) {
    fs.rmSync(path.join(profileDir, name), { force: true });
  }
  fs.writeFileSync(
    path.join(profileDir, WORKER_LOCK),
    JSON.stringify({ host: os.hostname(), pid: process.pid }),
  );
}

/** Gives the profile up at a clean exit (a lock of a dead worker is recovered anyway). */
export function releaseProfile(profileDir: string): void {
  const owner = readWorkerLock(profileDir);
  if (owner?.pid === process.pid) fs.rmSync(path.join(profileDir, WORKER_LOCK), { force: true });
}
