import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CpuTimes, LoadAvg, MemInfo, ProcStat } from './parse';
import {
  parseLoadavg,
  parseMeminfo,
  parsePidStat,
  parseProcStat,
  parseSmapsRollupPss,
  parseThermal,
} from './parse';

/** Where the kernel's files are: the real ones, or a folder of fixed files in a test. */
export interface HostRoots {
  proc: string;
  sys: string;
}

export const REAL_HOST: HostRoots = { proc: '/proc', sys: '/sys' };

/** Readings outside this range are a zone's "no sensor" value, not a temperature. */
const PLAUSIBLE_C = { min: -50, max: 200 };

export const readCpu = async (r: HostRoots = REAL_HOST): Promise<CpuTimes> =>
  parseProcStat(await fs.readFile(path.join(r.proc, 'stat'), 'utf8'));

export const readMem = async (r: HostRoots = REAL_HOST): Promise<MemInfo> =>
  parseMeminfo(await fs.readFile(path.join(r.proc, 'meminfo'), 'utf8'));

export const readLoad = async (r: HostRoots = REAL_HOST): Promise<LoadAvg> =>
  parseLoadavg(await fs.readFile(path.join(r.proc, 'loadavg'), 'utf8'));

/**
 * The hottest thermal zone in °C, or null when the host has none (most VMs and containers).
 * The hottest, because a fleet owner watches for the host running hot, not for an average.
 */
export async function readTemp(r: HostRoots = REAL_HOST): Promise<number | null> {
  const dir = path.join(r.sys, 'class', 'thermal');
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch {
    return null;
  }
  const temps = await Promise.all(
    names
      .filter((n) => /^thermal_zone\d+$/.test(n))
      .map((n) =>
        fs
          .readFile(path.join(dir, n, 'temp'), 'utf8')
          .then(parseThermal)
          .catch(() => null),
      ),
  );
  const valid = temps.filter(
    (t): t is number => t !== null && t > PLAUSIBLE_C.min && t < PLAUSIBLE_C.max,
  );
  return valid.length ? Math.max(...valid) : null;
}

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

let pageKb: number | null = null;

/** The page size in kB (the unit of the rss field of /proc/<pid>/stat). */
export function pageSizeKb(): number {
  if (pageKb === null) {
    try {
      pageKb = Number(execFileSync('getconf', ['PAGESIZE'], { encoding: 'utf8' }).trim()) / 1024;
    } catch {
      pageKb = 4;
    }
    if (!Number.isFinite(pageKb) || pageKb <= 0) pageKb = 4;
  }
  return pageKb;
}
