import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CpuTimes, ProcStat } from './proc-parse';
import {
  parsePidStat,
  parseProcStat,
  parseSmapsRollupPss,
  parseUptime,
  processCpuPct,
  processTree,
  procKey,
  ticksSince,
} from './proc-parse';

/** Where the kernel's files are: the real ones, or a folder of fixed files in a test. */
export interface HostRoots {
  proc: string;
  sys: string;
}

export const REAL_HOST: HostRoots = { proc: '/proc', sys: '/sys' };

export const readCpu = async (r: HostRoots = REAL_HOST): Promise<CpuTimes> =>
  parseProcStat(await fs.readFile(path.join(r.proc, 'stat'), 'utf8'));

/** Every process of the host (a process that ends while it is read is left out). */
export async function readProcesses(r: HostRoots = REAL_HOST): Promise<ProcStat[]> {
  const names = (await fs.readdir(r.proc)).filter((n) => /^\d+$/.test(n));
  const stats = await Promise.all(
    names.map((n) =>
      fs
        .readFile(path.join(r.proc, n, 'stat'), 'utf8')
        .then(parsePidStat)
        .catch(() => null),
    ),
  );
  return stats.filter((s): s is ProcStat => s !== null);
}

/** Proportional set size in kB, or null when smaps_rollup cannot be read (other user, old kernel). */
export async function readPssKb(pid: number, r: HostRoots = REAL_HOST): Promise<number | null> {
  try {
    return parseSmapsRollupPss(
      await fs.readFile(path.join(r.proc, String(pid), 'smaps_rollup'), 'utf8'),
    );
  } catch {
    return null;
  }
}

/** `getconf NAME` as a positive number, read once; `fallback` where it cannot be read. */
function getconfOnce(name: string, fallback: number): () => number {
  let value: number | null = null;
  return () => {
    if (value === null) {
      try {
        value = Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
      } catch {
        value = fallback;
      }
      if (!Number.isFinite(value) || value <= 0) value = fallback;
    }
    return value;
  };
}

/** Clock ticks per second (USER_HZ: the unit of /proc/<pid>/stat times), 100 where unknown. */
export const clockTicksPerSecond = getconfOnce('CLK_TCK', 100);

const pageSizeBytes = getconfOnce('PAGESIZE', 4096);

/** The page size in kB (the unit of the rss field of /proc/<pid>/stat). */
export const pageSizeKb = (): number => pageSizeBytes() / 1024;

/** One reading of the host's counters: what the next figures' CPU deltas start from. */
export interface TreeReading {
  cpu: CpuTimes;
  /** utime + stime of every process of the host, by procKey. */
  ticks: Map<string, number>;
  procs: ProcStat[];
}

/** A process tree's figures, as the fleet's metrics report them for a persona. */
export interface TreeFigures {
  /** The root of the tree. */
  pid: number;
  /** Processes in the tree, the root included. */
  procs: number;
  /** CPU since the previous reading as a share of one core, summed over cores (can exceed 100). */
  cpu_pct: number;
  /** Memory of the tree counted as PSS, in MB. */
  rss_mb: number;
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const round2 = (n: number): number => Math.round(n * 100) / 100;

export async function readTree(r: HostRoots = REAL_HOST): Promise<TreeReading> {
  const [cpu, procs] = await Promise.all([readCpu(r), readProcesses(r)]);
  return { cpu, procs, ticks: new Map(procs.map((p) => [procKey(p), p.ticks])) };
}

/**
 * The figures of the tree under `pid` in `cur`, or null when no such process is running.
 * `cpu_pct` is the utime + stime its processes used since `prev`, as a share of one core;
 * `rss_mb` is PSS (/proc/<pid>/smaps_rollup: pages shared between processes, such as
 * Chromium's shared libraries and shared memory, split among them), because a plain RSS sum
 * counts each shared page once per process and overstates a multi-process browser several
 * times over. A process whose smaps_rollup cannot be read (another user, kernel before 4.14)
 * adds its RSS instead. Reading smaps_rollup walks the process's page tables: about a
 * millisecond per Chromium process.
 */
export async function treeFigures(
  pid: number,
  prev: TreeReading,
  cur: TreeReading,
  r: HostRoots = REAL_HOST,
): Promise<TreeFigures | null> {
  const tree = processTree(cur.procs, pid);
  if (tree.length === 0) return null;
  const memKb = await Promise.all(
    tree.map(async (p) => (await readPssKb(p.pid, r)) ?? p.rssPages * pageSizeKb()),
  );
  return {
    pid,
    procs: tree.length,
    cpu_pct: round1(processCpuPct(ticksSince(tree, prev.ticks), prev.cpu, cur.cpu)),
    rss_mb: round2(memKb.reduce((a, b) => a + b, 0) / 1024),
  };
}

/**
 * A reading from before anything ran: every process's ticks count, over the time since the
 * process that started at `startTicks` (ticks after boot) began, on the host's cores.
 */
function sinceStart(cur: TreeReading, startTicks: number, uptimeTicks: number): TreeReading {
  const elapsed = Math.max(0, uptimeTicks - startTicks);
  const total = cur.cpu.total - elapsed * cur.cpu.cores;
  return { cpu: { ...cur.cpu, total, idle: 0 }, ticks: new Map(), procs: [] };
}

/**
 * A process tree measured at each call, for a service reporting its own children: each call's
 * CPU covers the time since the previous call; the first call's covers the time since the
 * tree's root process started (its average over its life so far).
 */
export class TreeMeter {
  private previous: TreeReading | null = null;

  constructor(private readonly roots: HostRoots = REAL_HOST) {}

  async measure(pid: number): Promise<TreeFigures | null> {
    const [cur, uptime] = await Promise.all([
      readTree(this.roots),
      fs.readFile(path.join(this.roots.proc, 'uptime'), 'utf8').then(parseUptime),
    ]);
    const root = cur.procs.find((p) => p.pid === pid);
    const prev =
      this.previous ?? (root ? sinceStart(cur, root.start, uptime * clockTicksPerSecond()) : cur);
    this.previous = cur;
    return treeFigures(pid, prev, cur, this.roots);
  }
}
