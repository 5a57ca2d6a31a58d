import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { metricsBodySchema } from '@persona-browser/contracts';
import type { MetricsBody } from '@persona-browser/contracts';
import { MetricsSampler } from '../src/metrics';
import type { Instance } from '../src/metrics';
import { readTemp } from '../src/metrics/host';
import { until } from '@persona-browser/testkit/waker';

/**
 * A real process tree like a persona's: a node parent with a `sleep` child and a node child
 * that is idle, busy (a spin loop) or holding memory. Its own process group, so one kill ends it.
 */
interface Tree {
  proc: ChildProcess;
  pid: number;
  kill(): void;
}

const TREE_SCRIPT = `
const { spawn } = require('node:child_process');
const work = {
  idle: 'setInterval(() => {}, 1e6)',
  busy: 'for (;;) {}',
  memory: 'const b = Buffer.alloc(160 * 1024 * 1024, 1); setInterval(() => b[0]++, 1e6)',
}[process.argv[1]];
const kids = [
  spawn('sleep', ['600'], { stdio: 'ignore' }),
  spawn(process.execPath, ['-e', work], { stdio: 'ignore' }),
];
Promise.all(kids.map((k) => new Promise((ok) => k.once('spawn', ok)))).then(() =>
  setTimeout(() => process.stdout.write('ready\\n'), 300),
);
setInterval(() => {}, 1e6);
`;

const trees: Tree[] = [];

async function startTree(kind: 'idle' | 'busy' | 'memory'): Promise<Tree> {
  const proc = spawn(process.execPath, ['-e', TREE_SCRIPT, kind], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    proc.once('error', reject);
    proc.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve();
    });
  });
  const pid = proc.pid!;
  const tree: Tree = {
    proc,
    pid,
    kill: () => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
  trees.push(tree);
  return tree;
}

const samplers: MetricsSampler[] = [];
function sampler(o: { intervalS: number; windowS: number; instances: () => Instance[] }) {
  const s = new MetricsSampler({ ...o, onError: (err) => errors.push(err) });
  samplers.push(s);
  return s;
}
let errors: unknown[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for `check` to hold, naming `what` when it does not in time. */
const holds = (check: () => boolean, timeoutMs: number, what: string): Promise<true> =>
  until(async () => (check() ? true : null), timeoutMs, what);

function expectValid(body: MetricsBody): void {
  const { error } = metricsBodySchema.validate(body, { convert: false, presence: 'required' });
  expect(error).toBeUndefined();
}

beforeEach(() => {
  errors = [];
});

afterEach(() => {
  for (const s of samplers.splice(0)) s.stop();
  for (const t of trees.splice(0)) t.kill();
  expect(errors).toEqual([]);
});

describe('per-persona numbers over the whole process tree', () => {
  test('procs, CPU and memory of real trees; a busy tree shows far more CPU than an idle one', async () => {
    const [idle, busy, memory] = [
      await startTree('idle'),
      await startTree('busy'),
      await startTree('memory'),
    ];
    const s = sampler({
      intervalS: 60,
      windowS: 600,
      instances: () => [
        { name: 'idle', pid: idle.pid },
        { name: 'busy', pid: busy.pid },
        { name: 'memory', pid: memory.pid },
        { name: 'asleep', pid: null },
      ],
    });
    s.start(); // the baseline reading
    // Time itself is tested: a rate over an interval.
    await sleep(2500);
    const sample = await s.sampleNow();
    const i = sample.instances;
    expect(i.asleep).toBeNull();
    for (const [name, tree] of [
      ['idle', idle],
      ['busy', busy],
      ['memory', memory],
    ] as const) {
      expect(i[name]).toMatchObject({ pid: tree.pid });
      // node parent + sleep + node child (node may add no threads as processes).
      expect(i[name]!.procs).toBe(3);
      expect(i[name]!.rss_mb).toBeGreaterThan(10);
    }
    // The spin loop: whatever share of a core a machine shared with other work leaves it, far
    // more than the idle tree's.
    expect(i.busy!.cpu_pct).toBeGreaterThan(5);
    expect(i.busy!.cpu_pct).toBeGreaterThan(5 * i.idle!.cpu_pct);
    // The 160 MB buffer is in the tree's memory, and nowhere near twice (no double counting).
    expect(i.memory!.rss_mb - i.idle!.rss_mb).toBeGreaterThan(130);
    expect(i.memory!.rss_mb - i.idle!.rss_mb).toBeLessThan(260);
    // The host is at least as busy as the busy tree, and its memory holds the buffer.
    expect(sample.system.cpu_pct).toBeGreaterThan(i.busy!.cpu_pct * 0.8);
    expect(sample.system.mem_used_mb).toBeGreaterThan(160);
    expect(sample.system.mem_used_mb).toBeLessThan(sample.system.mem_total_mb);
    expect(sample.system.load1).toBeGreaterThanOrEqual(0);
    expectValid(s.body());
  });

  test('a child that ends leaves the count; a tree that ends is null', async () => {
    const t = await startTree('idle');
    const s = sampler({
      intervalS: 60,
      windowS: 600,
      instances: () => [{ name: 'p', pid: t.pid }],
    });
    s.start();
    const first = await s.sampleNow();
    expect(first.instances.p!.procs).toBe(3);
    // Kill the sleep child only: the parent stays.
    const sleepPid = fs
      .readdirSync('/proc')
      .filter((n) => /^\d+$/.test(n))
      .find((n) => {
        try {
          const stat = fs.readFileSync(`/proc/${n}/stat`, 'utf8');
          return stat.includes('(sleep)') && stat.split(') ')[1]!.split(' ')[1] === String(t.pid);
        } catch {
          return false;
        }
      });
    expect(sleepPid).toBeDefined();
    process.kill(Number(sleepPid), 'SIGKILL');
    await holds(
      () => !fs.existsSync(`/proc/${sleepPid}/stat`) || zombie(Number(sleepPid)),
      5000,
      `the killed sleep child ${sleepPid} to end`,
    );
    // Until the parent has reaped it (a zombie may be listed for a moment): two processes.
    const second = await until(
      async () => {
        const sample = await s.sampleNow();
        return sample.instances.p!.procs === 2 ? sample : null;
      },
      10_000,
      'a sample counting two processes of the tree without its sleep child',
    );
    expect(second.instances.p).toMatchObject({ procs: 2 });
    t.kill();
    await holds(() => !fs.existsSync(`/proc/${t.pid}`), 5000, `the tree ${t.pid} to end`);
    const third = await s.sampleNow();
    expect(third.instances).toEqual({ p: null });
    expectValid(s.body());
  });
});

function zombie(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return true;
  }
}

describe('schedule and window', () => {
  test('cron samples every interval; the window keeps windowS seconds of them', async () => {
    const s = sampler({
      intervalS: 1,
      windowS: 3,
      instances: () => [{ name: 'me', pid: process.pid }],
    });
    s.start();
    await holds(() => s.body().samples.length >= 3, 8000, 'three samples');
    // A few more ticks: the window stays at three samples, the newest last.
    const seen = s.body().samples.at(-1)!.ts;
    await holds(() => s.body().samples.at(-1)!.ts >= seen + 2, 8000, 'a sample two seconds newer');
    const body = s.body();
    expect(body.interval_s).toBe(1);
    expect(body.window_s).toBe(3);
    expect(body.samples.length).toBe(3);
    const ts = body.samples.map((x) => x.ts);
    expect(ts.at(-1)! - ts[0]!).toBeLessThan(3);
    expect([...ts].sort((a, b) => a - b)).toEqual(ts);
    expect(Math.abs(ts.at(-1)! - Date.now() / 1000)).toBeLessThan(3);
    expect(body.samples.at(-1)!.instances.me).toMatchObject({ pid: process.pid });
    expectValid(body);
    // Stopped: no more samples.
    s.stop();
    const count = s.body().samples.at(-1)!.ts;
    // Time itself is tested: no sample over two intervals.
    await sleep(2200);
    expect(s.body().samples.at(-1)!.ts).toBe(count);
  });

  test('an interval that does not divide a minute (7 s) is kept evenly', async () => {
    const s = sampler({ intervalS: 7, windowS: 600, instances: () => [] });
    s.start();
    await holds(() => s.body().samples.length >= 2, 20000, 'two samples 7 s apart');
    const [a, b] = s.body().samples;
    expect(b!.ts - a!.ts).toBeGreaterThanOrEqual(6);
    expect(b!.ts - a!.ts).toBeLessThanOrEqual(8);
    expect(b!.instances).toEqual({});
    expectValid(s.body());
  }, 30000);

  test('bad settings are refused', () => {
    const instances = (): Instance[] => [];
    expect(() => new MetricsSampler({ intervalS: 0, windowS: 600, instances })).toThrow(RangeError);
    expect(() => new MetricsSampler({ intervalS: 1.5, windowS: 600, instances })).toThrow(
      RangeError,
    );
    expect(() => new MetricsSampler({ intervalS: 15, windowS: 10, instances })).toThrow(RangeError);
  });
});

describe('host temperature', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-thermal-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const zone = (name: string, temp: string) => {
    fs.mkdirSync(path.join(dir, 'class', 'thermal', name), { recursive: true });
    fs.writeFileSync(path.join(dir, 'class', 'thermal', name, 'temp'), temp);
  };

  test('the hottest zone in °C; junk and "no sensor" values are left out', async () => {
    zone('thermal_zone0', '45500\n');
    zone('thermal_zone1', '61000\n');
    zone('thermal_zone2', '-273000\n');
    zone('cooling_device0', '99000\n');
    expect(await readTemp({ proc: '/proc', sys: dir })).toBe(61);
  });

  test('null when the host has no thermal zone', async () => {
    expect(await readTemp({ proc: '/proc', sys: dir })).toBeNull();
    fs.mkdirSync(path.join(dir, 'class', 'thermal'), { recursive: true });
    expect(await readTemp({ proc: '/proc', sys: dir })).toBeNull();
  });
});
