/**
 * Pure parsers of the Linux /proc and /sys texts the metrics read, and the arithmetic that
 * turns two readings into percentages. No file access here: the unit tests feed fixed text.
 */

/** The aggregate `cpu` line of /proc/stat, in clock ticks, and how many cores it covers. */
export interface CpuTimes {
  /** Every tick of every core (user … steal; guest time is already inside user). */
  total: number;
  /** Ticks spent idle or waiting for I/O. */
  idle: number;
  /** `cpuN` lines: the online cores. */
  cores: number;
}

export function parseProcStat(text: string): CpuTimes {
  let agg: number[] | null = null;
  let cores = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('cpu ')) agg = line.trim().split(/\s+/).slice(1).map(Number);
    else if (/^cpu\d+\s/.test(line)) cores += 1;
  }
  if (!agg || agg.length < 4 || agg.some((n) => !Number.isFinite(n))) {
    throw new Error('/proc/stat has no aggregate cpu line');
  }
  // user nice system idle iowait irq softirq steal [guest guest_nice]: guest is counted in user.
  const total = agg.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (agg[3] ?? 0) + (agg[4] ?? 0);
  return { total, idle, cores: Math.max(1, cores) };
}

/** Host CPU busy between two readings, summed over cores (100 = one core fully busy). */
export function systemCpuPct(prev: CpuTimes, cur: CpuTimes): number {
  const total = cur.total - prev.total;
  if (total <= 0) return 0;
  const busy = total - (cur.idle - prev.idle);
  return clampPct((busy / total) * 100 * cur.cores, cur.cores);
}

/** Process CPU ticks between two readings as a percentage of one core, summed over cores. */
export function processCpuPct(ticks: number, prev: CpuTimes, cur: CpuTimes): number {
  const total = cur.total - prev.total;
  if (total <= 0) return 0;
  // total / cores is the wall time of the interval in ticks, without needing CLK_TCK.
  return clampPct((ticks / (total / cur.cores)) * 100, cur.cores);
}

function clampPct(v: number, cores: number): number {
  return Math.min(Math.max(0, v), 100 * cores);
}

export interface MemInfo {
  totalKb: number;
  availableKb: number;
}

export function parseMeminfo(text: string): MemInfo {
  const kb = (name: string): number | null => {
    const m = new RegExp(`^${name}:\\s+(\\d+)\\s*kB`, 'm').exec(text);
    return m ? Number(m[1]) : null;
  };
  const totalKb = kb('MemTotal');
  if (totalKb === null) throw new Error('/proc/meminfo has no MemTotal');
  // Kernels before 3.14 have no MemAvailable: free + buffers + page cache comes closest.
  const availableKb =
    kb('MemAvailable') ?? (kb('MemFree') ?? 0) + (kb('Buffers') ?? 0) + (kb('Cached') ?? 0);
  return { totalKb, availableKb };
}

export interface LoadAvg {
  load1: number;
  load5: number;
}

export function parseLoadavg(text: string): LoadAvg {
  const [a, b] = text.trim().split(/\s+/).map(Number);
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b)) {
    throw new Error(`/proc/loadavg is not readable: ${text.slice(0, 40)}`);
  }
  return { load1: a, load5: b };
}

/** A thermal zone's `temp` file (millidegrees Celsius) in degrees, or null when not a number. */
export function parseThermal(text: string): number | null {
  const t = text.trim();
  if (!/^-?\d+$/.test(t)) return null;
  return Number(t) / 1000;
}

/** The fields of /proc/<pid>/stat the metrics need. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** R, S, D, Z … */
  state: string;
  /** utime + stime, clock ticks. */
  ticks: number;
  /** Clock ticks after boot when the process started: with pid, it names one process. */
  start: number;
  /** Resident pages. */
  rssPages: number;
}

/** Parses /proc/<pid>/stat; null for text that is not one (a torn read of a dying process). */
export function parsePidStat(text: string): ProcStat | null {
  // comm is in parentheses and may itself hold spaces and ')': the fields follow the last ')'.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 1 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const f = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // f[0] is field 3 (state); field n is f[n - 3].
  const state = f[0];
  const nums = [f[1], f[11], f[12], f[19], f[21]].map(Number);
  const [ppid, utime, stime, start, rss] = nums;
  if (
    !Number.isInteger(pid) ||
    state === undefined ||
    ppid === undefined ||
    utime === undefined ||
    stime === undefined ||
    start === undefined ||
    rss === undefined ||
    nums.some((n) => !Number.isFinite(n))
  ) {
    return null;
  }
  return { pid, ppid, state, ticks: utime + stime, start, rssPages: rss };
}

/** `Pss:` of /proc/<pid>/smaps_rollup in kB, or null when the text has none. */
export function parseSmapsRollupPss(text: string): number | null {
  const m = /^Pss:\s+(\d+)\s*kB/m.exec(text);
  return m ? Number(m[1]) : null;
}

/** The pids of the process tree under `root` (root first), following ppid links. */
export function processTree(procs: Iterable<ProcStat>, root: number): ProcStat[] {
  const byPid = new Map<number, ProcStat>();
  const children = new Map<number, ProcStat[]>();
  for (const p of procs) {
    byPid.set(p.pid, p);
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const top = byPid.get(root);
  if (!top) return [];
  const out: ProcStat[] = [];
  const seen = new Set<number>();
  const queue = [top];
  for (let p = queue.shift(); p; p = queue.shift()) {
    if (seen.has(p.pid)) continue;
    seen.add(p.pid);
    out.push(p);
    for (const c of children.get(p.pid) ?? []) if (c.pid !== p.pid) queue.push(c);
  }
  return out;
}

/** A process's identity across readings: a reused pid has another start time. */
export const procKey = (p: ProcStat): string => `${p.pid}:${p.start}`;

/**
 * CPU ticks the processes used since the previous reading. A process absent from it started
 * after it (the previous reading covers every process of the host), so all its ticks count.
 * Processes that ended between the readings lose their last partial interval, as in `top`.
 */
export function ticksSince(tree: ProcStat[], previous: ReadonlyMap<string, number>): number {
  let sum = 0;
  for (const p of tree) {
    const before = previous.get(procKey(p));
    sum += before === undefined ? p.ticks : Math.max(0, p.ticks - before);
  }
  return sum;
}

/** Seconds since boot, the first number of /proc/uptime. */
export function parseUptime(text: string): number {
  const s = Number(text.trim().split(/\s+/)[0]);
  if (!Number.isFinite(s) || s < 0)
    throw new Error(`/proc/uptime is not readable: ${text.slice(0, 40)}`);
  return s;
}
