import fs from 'node:fs';
import { cpuMs } from '@persona-browser/testkit/procs';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { BenchSection, Row } from './section';
import type { BenchWorker } from './spawn';
import { startWorker, waitInitialized } from './spawn';

/**
 * Section: what a screen recording of a plugin call costs (RECORDING=true, RECORDING_FPS=2, the
 * defaults but the switch). The same call on a worker with recording off and one with it on:
 * the extra CPU of the persona (worker and Xvfb; Chromium draws the same either way) during the
 * call, and the bytes a minute of recording takes, of a page that keeps moving (scrolled every
 * 250 ms) and of one that stands still.
 */

const SECONDS = Number(process.env.BENCH_RECORDING_SECONDS ?? 15);

const plugins = (): string =>
  writePluginTree(
    [
      {
        name: 'bench/scrolling',
        manifest: manifest([], { timeout_s: SECONDS + 30 }),
        js: `module.exports.default = { async run(ctx) {
          await ctx.page.goto(ctx.setting('BENCH_SITE') + '/content-large');
          const end = Date.now() + ${SECONDS * 1000};
          while (Date.now() < end) {
            await ctx.page.evaluate(() => {
              if (innerHeight + scrollY >= document.body.scrollHeight - 5) scrollTo(0, 0);
              else scrollBy(0, 200);
            });
            await ctx.sleep(250);
          }
          return { success: true };
        } };`,
      },
      {
        name: 'bench/still',
        manifest: manifest([], { timeout_s: SECONDS + 30 }),
        js: `module.exports.default = { async run(ctx) {
          await ctx.page.goto(ctx.setting('BENCH_SITE') + '/content');
          await ctx.sleep(${SECONDS * 1000});
          return { success: true };
        } };`,
      },
    ],
    { 'bench/family.json': { settings: { BENCH_SITE: { default: 'http://127.0.0.1:9' } } } },
  );

interface Measured {
  /** CPU ms of worker + Xvfb during the call, and the call's wall time. */
  cpuMs: number;
  wallMs: number;
}

async function call(w: BenchWorker, plugin: string): Promise<Measured> {
  const xvfb = w.xvfbPid();
  if (xvfb === null) throw new Error('the worker logged no Xvfb pid');
  const cpu = (): number => cpuMs(w.pid) + cpuMs(xvfb);
  const c0 = cpu();
  const t0 = performance.now();
  const r = await w.client.json('POST', `/api/v1/a/plugin/${plugin}`, {});
  if (r.status !== 200) throw new Error(`${plugin} answered ${r.status}`);
  return { cpuMs: cpu() - c0, wallMs: performance.now() - t0 };
}

async function persona(root: string, site: string, recording: boolean): Promise<BenchWorker> {
  const w = await startWorker({
    PLUGINS_DIR: root,
    BENCH_SITE: site,
    RECORDING: String(recording),
  });
  await waitInitialized(w);
  const r = await w.client.json('POST', '/api/v1/ops/create-page', { page_id: 'a' });
  if (r.status !== 200) throw new Error(`create-page answered ${r.status}`);
  // A first call warms the page and the plugin up; it is not measured.
  await call(w, 'bench/still').catch(() => undefined);
  return w;
}

interface Listed {
  plugin: string;
  duration_ms: number;
  size: number;
  frames: number;
}

export const recordingSection: BenchSection = {
  id: 'recording',
  title: `Screen recording of a plugin call (${SECONDS} s calls, 2 frames a second)`,
  run: async (ctx) => {
    const root = plugins();
    try {
      ctx.progress('recording: recording off');
      const off = await persona(root, ctx.fixture.url, false);
      let base: Measured;
      try {
        base = await call(off, 'bench/scrolling');
      } finally {
        await off.stop();
      }
      ctx.progress('recording: recording on');
      const on = await persona(root, ctx.fixture.url, true);
      let busy: Measured;
      let list: Listed[];
      try {
        busy = await call(on, 'bench/scrolling');
        await call(on, 'bench/still');
        const r = await on.client.json('GET', '/api/v1/recordings');
        list = r.body.recordings as Listed[];
      } finally {
        await on.stop();
      }
      const perMinute = (plugin: string): { mb: number; frames: number } => {
        const rec = list.find((x) => x.plugin === plugin);
        if (!rec) throw new Error(`no recording of ${plugin}`);
        return { mb: (rec.size / 1048576) * (60_000 / rec.duration_ms), frames: rec.frames };
      };
      const pct = (m: Measured): number => (m.cpuMs / m.wallMs) * 100;
      const scrolling = perMinute('bench/scrolling');
      const still = perMinute('bench/still');
      const rows: Row[] = [
        {
          key: 'recording.extra_cpu_pct',
          label: 'extra CPU of worker + Xvfb while recording (% of one core)',
          value: pct(busy) - pct(base),
          unit: '',
          digits: 1,
          detail: `on ${pct(busy).toFixed(1)} %, off ${pct(base).toFixed(1)} % (scrolling page)`,
        },
        {
          key: 'recording.scrolling_mb_per_min',
          label: 'recording of a scrolling page, per minute',
          value: scrolling.mb,
          unit: 'MB',
          digits: 2,
          detail: `${scrolling.frames} frames`,
        },
        {
          key: 'recording.still_mb_per_min',
          label: 'recording of a page standing still, per minute',
          value: still.mb,
          unit: 'MB',
          digits: 3,
          detail: `${still.frames} frames`,
        },
      ];
      return rows;
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};
