import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { errnoCode } from './errors';

export interface HourCount {
  /** Start of the UTC hour, ISO 8601 (`2026-11-23T17:00:00Z`). */
  hour: string;
  count: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The worker keeps 50 days of request log; a longer range could only add zeros. */
export const MAX_HOURS = 50 * 24;
const ROW_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

const hourLabel = (ms: number): string => new Date(ms).toISOString().slice(0, 13) + ':00:00Z';
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Client requests a persona's worker began in each UTC hour: `start` rows of its request log
 * (`<personaDir>/requests/YYYY-MM-DD.csv`, docs/api.md). `hours` buckets, oldest first,
 * the last one the hour `now` is in, up to `now`; hours without requests count 0. Only the day files
 * that overlap the range are read, line by line. A line that is not a whole row (a torn write
 * before a power cut, a header repeated after a file was deleted) is skipped; a `start` row
 * whose tail was torn off still counts, since its time and event say the request began.
 */
export async function requestsPerHour(
  personaDir: string,
  hours: number,
  now: Date = new Date(),
): Promise<HourCount[]> {
  if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HOURS) {
    throw new RangeError(`hours must be a whole number from 1 to ${MAX_HOURS}, not ${hours}`);
  }
  const last = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS;
  const first = last - (hours - 1) * HOUR_MS;
  const end = Math.min(last + HOUR_MS, now.getTime() + 1);
  const counts = new Array<number>(hours).fill(0);
  const folder = path.join(personaDir, 'requests');
  for (let day = Math.floor(first / DAY_MS) * DAY_MS; day < end; day += DAY_MS) {
    await countFile(path.join(folder, `${dayOf(day)}.csv`), (ms) => {
      if (ms >= first && ms < end) counts[Math.floor((ms - first) / HOUR_MS)]! += 1;
    });
  }
  return counts.map((count, i) => ({ hour: hourLabel(first + i * HOUR_MS), count }));
}

/** Calls `onStart` with the time of every `start` row of one day file (none when absent). */
async function countFile(file: string, onStart: (ms: number) => void): Promise<void> {
  let stream: fs.ReadStream;
  try {
    const handle = await fs.promises.open(file, 'r');
    stream = handle.createReadStream({ encoding: 'utf8' });
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return;
    throw err;
  }
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      // `time` and `event` never need CSV quoting: they are the first two plain fields.
      const [time, event] = line.split(',', 3);
      if (event !== 'start' || time === undefined || !ROW_TIME.test(time)) continue;
      const ms = Date.parse(time);
      if (Number.isFinite(ms)) onStart(ms);
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
