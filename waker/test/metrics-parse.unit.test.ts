import {
  parseLoadavg,
  parseMeminfo,
  parsePidStat,
  parseProcStat,
  parseSmapsRollupPss,
  parseThermal,
  parseUptime,
  processCpuPct,
  processTree,
  procKey,
  systemCpuPct,
  ticksSince,
} from '@persona-browser/service-kit';
import type { ProcStat } from '@persona-browser/service-kit';
import { scheduleFor } from '../src/metrics';

const STAT_A = `cpu  1000 0 500 8000 500 0 0 0 0 0
cpu0 500 0 250 4000 250 0 0 0 0 0
cpu1 500 0 250 4000 250 0 0 0 0 0
intr 7742976 0 0
ctxt 32612281
btime 1795400000
`;
// 1000 more ticks in all (500 per core over the interval): 600 busy, 400 idle or iowait.
const STAT_B = `cpu  1400 0 700 8300 600 0 0 0 0 0
cpu0 700 0 350 4150 300 0 0 0 0 0
cpu1 700 0 350 4150 300 0 0 0 0 0
intr 7742999 0 0
`;

describe('/proc/stat', () => {
  test('totals, idle and the number of online cores', () => {
    expect(parseProcStat(STAT_A)).toEqual({ total: 10000, idle: 8500, cores: 2 });
  });

  test('host CPU is summed over cores: 60% of two cores is 120', () => {
    expect(systemCpuPct(parseProcStat(STAT_A), parseProcStat(STAT_B))).toBeCloseTo(120);
  });

  test('process CPU is a share of one core: 250 ticks of a 500-tick interval is 50%', () => {
    expect(processCpuPct(250, parseProcStat(STAT_A), parseProcStat(STAT_B))).toBeCloseTo(50);
    // Two cores fully busy: 200, never more than the host has.
    expect(processCpuPct(1000, parseProcStat(STAT_A), parseProcStat(STAT_B))).toBeCloseTo(200);
    expect(processCpuPct(5000, parseProcStat(STAT_A), parseProcStat(STAT_B))).toBe(200);
  });

  test('no time passed: 0, not a division by zero', () => {
    expect(systemCpuPct(parseProcStat(STAT_A), parseProcStat(STAT_A))).toBe(0);
    expect(processCpuPct(10, parseProcStat(STAT_A), parseProcStat(STAT_A))).toBe(0);
  });

  test('text without the aggregate line is an error', () => {
    expect(() => parseProcStat('intr 1 2 3\n')).toThrow(/cpu/);
  });
});

describe('/proc/meminfo, /proc/loadavg, thermal zones', () => {
  test('uptime: seconds since boot, the first number; junk is an error', () => {
    expect(parseUptime('25904.64 26575.69\n')).toBe(25904.64);
    expect(() => parseUptime('soon')).toThrow('/proc/uptime');
  });

  test('MemTotal and MemAvailable in kB', () => {
    const text =
      'MemTotal:       24684084 kB\nMemFree:        23248296 kB\nMemAvailable:   23925468 kB\n';
    expect(parseMeminfo(text)).toEqual({ totalKb: 24684084, availableKb: 23925468 });
  });

  test('an old kernel without MemAvailable: free + buffers + cached', () => {
    const text = 'MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 200 kB\n';
    expect(parseMeminfo(text)).toEqual({ totalKb: 1000, availableKb: 350 });
  });

  test('load averages', () => {
    expect(parseLoadavg('1.64 1.16 1.09 2/135 1188\n')).toEqual({ load1: 1.64, load5: 1.16 });
    expect(() => parseLoadavg('')).toThrow();
  });

  test('millidegrees to degrees; junk is null', () => {
    expect(parseThermal('45500\n')).toBe(45.5);
    expect(parseThermal('-5000')).toBe(-5);
    expect(parseThermal('')).toBeNull();
    expect(parseThermal('N/A')).toBeNull();
  });
});

describe('/proc/<pid>/stat and smaps_rollup', () => {
  test('fields after a comm with spaces and parentheses', () => {
    const text =
      '4242 (Web Content (x)) S 4000 4242 25288 0 -1 4194304 101 0 0 0 17 3 0 0 20 0 1 0 938045 3133440 412 18446744073709551615 0 0';
    expect(parsePidStat(text)).toEqual({
      pid: 4242,
      ppid: 4000,
      state: 'S',
      ticks: 20,
      start: 938045,
      rssPages: 412,
    });
  });

  test('a torn or empty read is null', () => {
    expect(parsePidStat('')).toBeNull();
    expect(parsePidStat('12 (sleep) S 1 12')).toBeNull();
  });

  test('Pss from smaps_rollup', () => {
    const text = `555b3f72c000-7ffc61353000 ---p 00000000 00:00 0                          [rollup]
Rss:                1760 kB
Pss:                 414 kB
Pss_Dirty:           112 kB
`;
    expect(parseSmapsRollupPss(text)).toBe(414);
    expect(parseSmapsRollupPss('Rss: 10 kB\n')).toBeNull();
  });
});

describe('process trees', () => {
  const p = (pid: number, ppid: number, ticks = 0, start = pid * 10): ProcStat => ({
    pid,
    ppid,
    state: 'S',
    ticks,
    start,
    rssPages: 1,
  });
  const host = [p(1, 0), p(10, 1), p(11, 10), p(12, 10), p(13, 12), p(20, 1), p(21, 20)];

  test('the whole tree under a root, root first; other trees are left out', () => {
    expect(processTree(host, 10).map((x) => x.pid)).toEqual([10, 11, 12, 13]);
    expect(processTree(host, 20).map((x) => x.pid)).toEqual([20, 21]);
    expect(processTree(host, 99)).toEqual([]);
  });

  test('ticks since the previous reading; a new process counts whole, a reused pid too', () => {
    const before = new Map([
      [procKey(p(10, 1, 100)), 100],
      [procKey(p(11, 10, 50)), 50],
      // pid 12 existed before with another start time: a different process.
      ['12:1', 999],
    ]);
    const now = [p(10, 1, 130), p(11, 10, 50), p(12, 10, 7)];
    expect(ticksSince(now, before)).toBe(30 + 0 + 7);
  });
});

describe('schedule', () => {
  test('intervals that divide a minute or an hour run on their own cron step', () => {
    expect(scheduleFor(15)).toEqual({ expression: '*/15 * * * * *', everySecond: false });
    expect(scheduleFor(1)).toEqual({ expression: '* * * * * *', everySecond: false });
    expect(scheduleFor(60)).toEqual({ expression: '0 * * * * *', everySecond: false });
    expect(scheduleFor(300)).toEqual({ expression: '0 */5 * * * *', everySecond: false });
  });

  test('other intervals tick every second and sample when due', () => {
    expect(scheduleFor(7)).toEqual({ expression: '* * * * * *', everySecond: true });
    expect(scheduleFor(90)).toEqual({ expression: '* * * * * *', everySecond: true });
  });
});
