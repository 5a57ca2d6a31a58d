import fs from 'node:fs';

/** Process-table helpers read straight from /proc (Linux only). */

function readOr(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

export const cmdlineOf = (pid: number): string =>
  (readOr(`/proc/${pid}/cmdline`) ?? '').replace(/\0/g, ' ').trim();

/** Parent pid and whether the process is a zombie, from /proc/<pid>/stat. */
function statOf(pid: number): { ppid: number; zombie: boolean } | null {
  const stat = readOr(`/proc/${pid}/stat`);
  if (!stat) return null;
  // The command name is in parentheses and may hold spaces: parse after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), zombie: fields[0] === 'Z' };
}

function allPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
}

export function isAlive(pid: number): boolean {
  const stat = statOf(pid);
  return stat !== null && !stat.zombie;
}

/** Live processes whose command line contains `needle`. */
export function pidsMatching(needle: string): number[] {
  return allPids().filter((pid) => isAlive(pid) && cmdlineOf(pid).includes(needle));
}

/** Every live descendant of `root` (not `root` itself). */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of allPids()) {
    const stat = statOf(pid);
    if (!stat || stat.zombie) continue;
    const list = children.get(stat.ppid) ?? [];
    list.push(pid);
    children.set(stat.ppid, list);
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length) {
    const pid = stack.pop() as number;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** Proportional set size of one process in MB (smaps_rollup), or null when it is gone. */
export function pssMb(pid: number): number | null {
  const rollup = readOr(`/proc/${pid}/smaps_rollup`);
  const m = rollup ? /^Pss:\s+(\d+) kB/m.exec(rollup) : null;
  return m ? Number(m[1]) / 1024 : null;
}

export function killQuietly(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}

/** CPU time (user + system, all threads) a process has used so far, in ms (USER_HZ = 100). */
export function cpuMs(pid: number): number {
  const stat = readOr(`/proc/${pid}/stat`);
  if (!stat) return Number.NaN;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * After an Xvfb had to be killed: its socket file, unless a live server (another display that
 * took the number since) listens on that path. A clean Xvfb exit removes it itself.
 */
export function removeDisplayFiles(display: string, pid: number): void {
  const n = /^:(\d+)$/.exec(display)?.[1];
  if (!n || isAlive(pid)) return;
  const socket = `/tmp/.X11-unix/X${n}`;
  const listening = (readOr('/proc/net/unix') ?? '')
    .split('\n')
    .some((line) => line.endsWith(socket));
  if (!listening) fs.rmSync(socket, { force: true });
}
