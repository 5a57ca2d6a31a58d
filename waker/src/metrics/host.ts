import fs from 'node:fs/promises';
import path from 'node:path';
import type { HostRoots, LoadAvg, MemInfo } from '@persona-browser/service-kit';
import { REAL_HOST, parseLoadavg, parseMeminfo, parseThermal } from '@persona-browser/service-kit';

export type { HostRoots } from '@persona-browser/service-kit';

/** Readings outside this range are a zone's "no sensor" value, not a temperature. */
const PLAUSIBLE_C = { min: -50, max: 200 };

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
