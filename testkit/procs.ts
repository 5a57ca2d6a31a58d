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

/** The parent of a live process (a container's first process: its containerd shim), or null. */
export function parentOf(pid: number): number | null {
  return statOf(pid)?.ppid ?? null;
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

/** The memory cgroup folder of a process, cgroup v1 or v2; null when it has none. */
function memoryCgroupOf(pid: number): string | null {
  const lines = (readOr(`/proc/${pid}/cgroup`) ?? '').split('\n');
  const v1 = lines.find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l));
  if (v1) return `/sys/fs/cgroup/memory${v1.slice(v1.lastIndexOf(':') + 1)}`;
  const v2 = lines.find((l) => l.startsWith('0::'));
  return v2 ? `/sys/fs/cgroup${v2.slice(3)}` : null;
}

/** Memory a cgroup holds, MB: anonymous, shared (memfd, SysV, tmpfs) and kernel memory. */
export interface HeldMemory {
  anon: number;
  shmem: number;
  kernel: number;
}

/**
 * What the memory cgroup of `pid` (a container's) holds, from its own accounting: anonymous
 * memory, shared memory and kernel memory (page tables, stacks, slab). File cache is left out:
 * for a persona it is Chromium's and node's code, shared with every container of the image,
 * and reclaimable. Null when the process or its cgroup's files are gone.
 */
export function cgroupHeldMb(pid: number): HeldMemory | null {
  const dir = memoryCgroupOf(pid);
  const stat = dir ? readOr(`${dir}/memory.stat`) : null;
  if (!dir || stat === null) return null;
  const field = (k: string): number | null => {
    const m = new RegExp(`^${k} (\\d+)$`, 'm').exec(stat);
    return m ? Number(m[1]) : null;
  };
  const mb = (bytes: number): number => Math.round((bytes / 1048576) * 10) / 10;
  const v1Anon = field('total_rss');
  if (v1Anon !== null) {
    // cgroup v1: rss is the anonymous memory; shared memory is counted in the cache.
    return {
      anon: mb(v1Anon),
      shmem: mb(field('total_shmem') ?? 0),
      kernel: mb(Number(readOr(`${dir}/memory.kmem.usage_in_bytes`) ?? 0)),
    };
  }
  const kernel =
    field('kernel') ??
    ['kernel_stack', 'pagetables', 'percpu', 'sock', 'vmalloc', 'slab'].reduce(
      (acc, k) => acc + (field(k) ?? 0),
      0,
    );
  return { anon: mb(field('anon') ?? 0), shmem: mb(field('shmem') ?? 0), kernel: mb(kernel) };
}
