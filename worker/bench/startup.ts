import type { BenchSection, Row } from './section';
import { atMost } from './section';
import { startWorker, waitInitialized } from './spawn';
import { median, range } from './stats';

/** Section 1: spawn to "listening" and to `initialized: true`, fresh profile every time. */

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);

export const startupSection: BenchSection = {
  id: 'startup',
  title: 'Worker start (fresh profile, own Xvfb, headed Chromium)',
  run: async (ctx) => {
    const listening: number[] = [];
    const initialized: number[] = [];
    const browserLaunch: number[] = [];
    const exit: number[] = [];
    let leftovers = 0;
    for (let i = 0; i < RUNS; i++) {
      const w = await startWorker();
      try {
        const readyAt = await waitInitialized(w, 20);
        listening.push(w.listeningAt - w.spawnedAt);
        initialized.push(readyAt - w.spawnedAt);
        const launched = w.logEntry('browser started')?.ms;
        if (typeof launched === 'number') browserLaunch.push(launched);
      } finally {
        const stopped = await w.stop();
        exit.push(stopped.exitMs);
        leftovers += stopped.leftovers;
      }
      ctx.progress(
        `startup ${i + 1}/${RUNS}: initialized after ${initialized.at(-1)?.toFixed(0)} ms`,
      );
    }
    const detail = (v: number[]): string => `n=${v.length}, range ${range(v)} ms`;
    const rows: Row[] = [
      {
        key: 'startup.listening_ms',
        label: 'spawn → "listening" logged',
        value: median(listening),
        unit: 'ms',
        detail: detail(listening),
      },
      {
        key: 'startup.initialized_ms',
        label: 'spawn → status initialized:true',
        value: median(initialized),
        unit: 'ms',
        target: atMost(2000, 'ms'),
        detail: `${detail(initialized)}; polled every 20 ms`,
      },
      {
        key: 'startup.browser_launch_ms',
        label: '  of which browser launch (worker log)',
        value: median(browserLaunch),
        unit: 'ms',
        detail: detail(browserLaunch),
      },
      {
        key: 'startup.sigterm_exit_ms',
        label: 'SIGTERM → worker exit (idle, no pages)',
        value: median(exit),
        unit: 'ms',
        detail: `${detail(exit)}; leftover processes killed: ${leftovers}`,
      },
    ];
    return rows;
  },
};
