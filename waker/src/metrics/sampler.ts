import cron from 'node-cron';
import type { ScheduledTask } from 'node-cron';
import type {
  InstanceSample,
  MetricsBody,
  MetricsSample,
  SystemSample,
} from '@persona-browser/contracts';
import type { HostPort } from '@persona-browser/contracts';
import type { LoadAvg, MemInfo, TreeReading } from '@persona-browser/service-kit';
import {
  REAL_HOST,
  errorMessage,
  readTree,
  systemCpuPct,
  treeFigures,
} from '@persona-browser/service-kit';
import type { HostRoots } from './host';
import { readLoad, readMem, readTemp } from './host';
import { readWorkerTree } from './worker-tree';

export interface Instance {
  name: string;
  /** Host pid of the root of the persona's process tree; null while the persona is down. */
  pid: number | null;
  /** Where the persona's worker answers, for sampling it over the network. */
  worker?: HostPort | null;
}

export interface SamplerOptions {
  /** Seconds between samples: a whole number ≥ 1. */
  intervalS: number;
  /** Seconds of samples kept. */
  windowS: number;
  instances: () => Instance[];
  /** A sample that could not be taken (default: one line on stderr). */
  onError?: (err: unknown) => void;
  /** Where /proc and /sys are (tests). */
  roots?: HostRoots;
  /**
   * Whether a persona's tree figures come from its worker (its browser process tree, as the
   * worker measures it in its own process namespace) rather than from this host's /proc: for
   * drivers whose personas run where this host cannot see their processes. Default: never.
   */
  overNetwork?: (instance: Instance) => boolean;
  /** The bearer key of the workers' API, for sampling over the network. */
  serviceKey?: string | null;
  /** How long a worker may take to answer its figures (ms, default 2000). */
  workerTimeoutMs?: number;
  /** Told of every sample taken (the memory budget remembers each persona's memory). */
  onSample?: (sample: MetricsSample) => void;
}

type Reading = TreeReading;

const round1 = (n: number): number => Math.round(n * 10) / 10;

/**
 * The cron expression (node-cron, with a seconds field) for an interval. Intervals that divide
 * a minute (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 s) or an hour in whole minutes fire on their
 * own schedule, aligned to the clock. Any other interval (7 s, 45 s, 90 s…) cannot be written
 * as one evenly spaced cron step (`*\/7` restarts at every minute, leaving a 4 s gap), so it
 * gets a per-second tick that samples when the interval has passed since the last sample.
 */
export function scheduleFor(intervalS: number): { expression: string; everySecond: boolean } {
  if (intervalS < 60 && 60 % intervalS === 0) {
    return {
      expression: intervalS === 1 ? '* * * * * *' : `*/${intervalS} * * * * *`,
      everySecond: false,
    };
  }
  const minutes = intervalS / 60;
  if (Number.isInteger(minutes) && minutes <= 60 && 60 % minutes === 0) {
    return {
      expression: minutes === 1 ? '0 * * * * *' : `0 */${minutes} * * * *`,
      everySecond: false,
    };
  }
  return { expression: '* * * * * *', everySecond: true };
}

/**
 * The waker's metrics: every `intervalS` seconds one sample of the host (CPU from /proc/stat
 * deltas, memory from /proc/meminfo, load, the hottest thermal zone) and of each persona's
 * whole process tree under its root pid (found through the ppid links of /proc/<pid>/stat),
 * kept for `windowS` seconds.
 *
 * Per persona (service-kit's treeFigures): `cpu_pct` is the utime + stime the tree's processes
 * used since the previous sample, as a share of one core (summed over cores, so it can exceed
 * 100); `rss_mb` is the tree's memory counted as PSS. A persona the `overNetwork` option picks
 * is sampled from its worker instead, which measures its browser's tree the same way (the
 * worker's own process is not in it); a worker that does not answer in time counts as down.
 */
export class MetricsSampler {
  private readonly roots: HostRoots;
  private readonly onError: (err: unknown) => void;
  private samples: MetricsSample[] = [];
  private task: ScheduledTask | null = null;
  private previous: Reading | null = null;
  /** Readings run one at a time, in order (cron ticks and sampleNow alike). */
  private chain: Promise<unknown> = Promise.resolve();
  private lastSampleMs = 0;
  private running = false;

  constructor(private readonly o: SamplerOptions) {
    if (!Number.isInteger(o.intervalS) || o.intervalS < 1) {
      throw new RangeError(
        `metrics interval must be a whole number of seconds ≥ 1, not ${o.intervalS}`,
      );
    }
    if (!Number.isFinite(o.windowS) || o.windowS < o.intervalS) {
      throw new RangeError(
        `metrics window (${o.windowS} s) must be at least the interval (${o.intervalS} s)`,
      );
    }
    this.roots = o.roots ?? REAL_HOST;
    this.onError =
      o.onError ?? ((err) => process.stderr.write(`metrics sample failed: ${errorMessage(err)}\n`));
  }

  /** Takes the baseline reading now and samples on the schedule from then on. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.enqueue(async () => {
      this.previous = await this.read();
    }).catch(this.onError);
    const { expression, everySecond } = scheduleFor(this.o.intervalS);
    this.task = cron.schedule(
      expression,
      // Returning the sample's promise lets noOverlap skip a tick while a slow sample still
      // runs, instead of queueing readings behind it.
      async () => {
        if (everySecond && Date.now() - this.lastSampleMs < this.o.intervalS * 1000 - 500) return;
        await this.sampleNow().catch(this.onError);
      },
      { name: 'waker-metrics', noOverlap: true },
    );
  }

  stop(): void {
    this.running = false;
    const task = this.task;
    this.task = null;
    if (task) void Promise.resolve(task.destroy()).catch(this.onError);
  }

  /** The newest sample, or null before the first. */
  latest(): MetricsSample | null {
    return this.samples.at(-1) ?? null;
  }

  body(): MetricsBody {
    return { interval_s: this.o.intervalS, window_s: this.o.windowS, samples: [...this.samples] };
  }

  /** Takes one sample now (after any reading in flight) and adds it to the window. */
  sampleNow(): Promise<MetricsSample> {
    return this.enqueue(async () => {
      this.lastSampleMs = Date.now();
      const ts = Math.round(this.lastSampleMs / 1000);
      const prev = this.previous ?? (await this.read());
      const [cur, mem, load, temp] = await Promise.all([
        readTree(this.roots),
        readMem(this.roots),
        readLoad(this.roots),
        readTemp(this.roots),
      ]);
      const sample: MetricsSample = {
        ts,
        system: this.system(prev, cur, mem, load, temp),
        instances: await this.instances(prev, cur),
      };
      this.previous = cur;
      this.add(sample);
      this.o.onSample?.(sample);
      return sample;
    });
  }

  private enqueue<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private add(sample: MetricsSample): void {
    this.samples.push(sample);
    const oldest = sample.ts - this.o.windowS;
    const keepFrom = this.samples.findIndex((s) => s.ts > oldest);
    if (keepFrom > 0) this.samples = this.samples.slice(keepFrom);
  }

  private read(): Promise<Reading> {
    return readTree(this.roots);
  }

  private system(
    prev: Reading,
    cur: Reading,
    mem: MemInfo,
    load: LoadAvg,
    temp: number | null,
  ): SystemSample {
    return {
      cpu_pct: round1(systemCpuPct(prev.cpu, cur.cpu)),
      mem_total_mb: round1(mem.totalKb / 1024),
      mem_used_mb: round1((mem.totalKb - mem.availableKb) / 1024),
      load1: load.load1,
      load5: load.load5,
      temp_c: temp === null ? null : round1(temp),
    };
  }

  private async instances(
    prev: Reading,
    cur: Reading,
  ): Promise<Record<string, InstanceSample | null>> {
    const list = this.o.instances();
    const figures = await Promise.all(list.map((instance) => this.figures(instance, prev, cur)));
    return Object.fromEntries(list.map(({ name }, i) => [name, figures[i] ?? null]));
  }

  /** One persona's tree: from its worker when `overNetwork` picks it, else from this host. */
  private async figures(
    instance: Instance,
    prev: Reading,
    cur: Reading,
  ): Promise<InstanceSample | null> {
    if (!this.o.overNetwork?.(instance)) {
      return instance.pid === null ? null : treeFigures(instance.pid, prev, cur, this.roots);
    }
    if (!instance.worker) return null;
    try {
      return await readWorkerTree(
        instance.worker,
        this.o.serviceKey ?? null,
        this.o.workerTimeoutMs ?? 2_000,
      );
    } catch (err) {
      this.onError(new Error(`${instance.name}: ${errorMessage(err)}`));
      return null;
    }
  }
}
