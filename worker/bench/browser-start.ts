import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@persona-browser/service-kit';
import { startXvfb } from '@persona-browser/xvfb';
import { findBrowserBinary } from '../src/browser/launch';
import { Navigator } from '../src/browser/navigator';
import type { PlatformName } from '../src/identity/platform';
import { startWorker, stopAll, waitInitialized } from './spawn';
import { median, percentile, range } from './stats';

/**
 * `npm run bench` (alone: `npm run build:bench && node worker/dist-bench/bench/browser-start.js`):
 * the wake of a persona in light sleep, whose worker runs while its browser is stopped. Each of
 * `BENCH_BROWSER_START_RUNS` runs (default 9, after one not counted) stops the browser and times
 * its start and its first page, twice over:
 *  - worker: a spawned worker's GET /api/v1/system/start, then POST /api/v1/ops/create-page,
 *    over HTTP as the waker calls them;
 *  - navigator: Navigator.start() and the pool's first page in this process, on a display and a
 *    profile of its own (the launch alone, without the worker's page hooks and HTTP).
 * Printed, never asserted; `BENCH_BROWSER_START_ONLY=worker|navigator` runs one of them, and
 * `BENCH_BROWSER_START_PLATFORM=windows` starts a persona telling another system than the machine's.
 */

const RUNS = Number(process.env.BENCH_BROWSER_START_RUNS ?? 9);
const ONLY = process.env.BENCH_BROWSER_START_ONLY ?? null;
/** A persona telling another system (`BROWSER_PLATFORM`), whose start reads and sets more. */
const PLATFORM = (process.env.BENCH_BROWSER_START_PLATFORM ?? null) as PlatformName | null;
const TARGET_MS = 1_000;

interface Sample {
  start: number[];
  wake: number[];
}

type Run = (i: number) => Promise<{ start: number; wake: number }>;

async function sample(label: string, run: Run): Promise<Sample> {
  const s: Sample = { start: [], wake: [] };
  for (let i = 0; i <= RUNS; i++) {
    const r = await run(i);
    // The first start on a fresh profile does more than a wake does: not counted.
    if (i === 0) continue;
    s.start.push(r.start);
    s.wake.push(r.wake);
    process.stderr.write(
      `  … ${label} ${i}/${RUNS}: start ${r.start.toFixed(0)} ms, + first page ${r.wake.toFixed(0)} ms\n`,
    );
  }
  return s;
}

async function viaWorker(): Promise<Sample> {
  const w = await startWorker(PLATFORM ? { BROWSER_PLATFORM: PLATFORM } : {});
  try {
    await waitInitialized(w);
    const call = async (method: string, route: string, body?: unknown): Promise<void> => {
      const r = await w.client.request(method, route, body);
      if (r.status !== 200) throw new Error(`${method} ${route}: ${r.status} ${r.text}`);
    };
    return await sample('worker', async () => {
      await call('GET', '/api/v1/system/stop');
      const t0 = performance.now();
      await call('GET', '/api/v1/system/start');
      const t1 = performance.now();
      await call('POST', '/api/v1/ops/create-page', { page_id: 'first' });
      const t2 = performance.now();
      return { start: t1 - t0, wake: t2 - t0 };
    });
  } finally {
    await w.stop();
  }
}

async function viaNavigator(): Promise<Sample> {
  const display = await startXvfb();
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-browser-start-'));
  const navigator = new Navigator({
    executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
    profileDir,
    display: display.display,
    window: display.workArea,
    platform: PLATFORM,
    slowmoMs: 0,
    logger: createLogger({ secrets: [], level: 'warn' }),
  });
  try {
    return await sample('navigator', async () => {
      const t0 = performance.now();
      await navigator.start();
      const t1 = performance.now();
      await navigator.requirePool().create('first');
      const t2 = performance.now();
      await navigator.stop();
      return { start: t1 - t0, wake: t2 - t0 };
    });
  } finally {
    await navigator.stop();
    await display.stop();
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
}

const line = (label: string, values: number[]): string =>
  `  ${label.padEnd(20)} median ${median(values).toFixed(0).padStart(5)} ms   ` +
  `p90 ${percentile(values, 90).toFixed(0).padStart(5)} ms   range ${range(values)} ms`;

const figures = (s: Sample) => ({
  start_ms: { median: Math.round(median(s.start)), p90: Math.round(percentile(s.start, 90)) },
  wake_ms: { median: Math.round(median(s.wake)), p90: Math.round(percentile(s.wake, 90)) },
});

async function main(): Promise<void> {
  const results: Array<[string, Sample]> = [];
  if (ONLY !== 'navigator') results.push(['worker', await viaWorker()]);
  if (ONLY !== 'worker') results.push(['navigator', await viaNavigator()]);
  let out =
    `\nbrowser start (light-sleep wake) — ${RUNS} runs each, ${os.cpus().length} cpus, ` +
    `1-min load ${(os.loadavg()[0] ?? 0).toFixed(2)}${PLATFORM ? `, platform ${PLATFORM}` : ''}\n`;
  for (const [label, s] of results) {
    out +=
      `${label}\n${line('start', s.start)}\n${line('start + first page', s.wake)}` +
      `   (target ≤ ${TARGET_MS} ms: ${median(s.wake) <= TARGET_MS ? 'met' : 'not met'})\n`;
  }
  const summary = Object.fromEntries(results.map(([label, s]) => [label, figures(s)]));
  out += `${JSON.stringify({ bench: 'browser-start', runs: RUNS, platform: PLATFORM, ...summary })}\n`;
  process.stdout.write(out);
}

main().catch(async (err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  await stopAll(true);
  process.exit(1);
});
