import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Browser } from 'puppeteer-core';
import { startXvfb } from '@persona-browser/xvfb';
import { findBrowserBinary, launchBrowser } from '../src/browser/launch';
import { ManagedPage } from '../src/browser/managed-page';
import { CaptureRegistry } from '../src/capture/registry';
import { DEFAULT_BUDGET_BYTES } from '../src/capture/store';
import { startNetworkSite } from './network-site';
import type { BenchSection, Row } from './section';
import { atMost } from './section';
import { median, range, sleep } from './stats';

/**
 * Network capture (targets: ≤ 5 % extra page-load time; memory within the 30 MB budget).
 *
 * Drives the capture registry directly on a headed Chromium under its own Xvfb, so that
 * capture on and off differ in nothing else: the same browser, page kind and site.
 * 1. Load time of a page making 200 requests (JSON by fetch and XHR, scripts, images), timed
 *    inside the page from navigation start until every request has arrived; capture on and off
 *    alternate, trial by trial, and the ratio is of the medians.
 * 2. 200 MB of JSON bodies (about 2× compressible) pulled through one page with capture on:
 *    the store's bytes against the budget, and the growth of this process's memory.
 */

const TRIALS = Number(process.env.BENCH_NETWORK_TRIALS ?? 15);
const REQUESTS = 200;
const BULK_MB = Number(process.env.BENCH_NETWORK_MB ?? 200);

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

async function liveBytes(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await sleep(100);
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

async function openPage(browser: Browser, id: string): Promise<ManagedPage> {
  const page = await browser.newPage();
  return new ManagedPage(id, page);
}

const mb = (bytes: number): number => bytes / 1_000_000;

export const networkSection: BenchSection = {
  id: 'network',
  title: `Network capture: load of a ${REQUESTS}-request page (${TRIALS} trials each), ${BULK_MB} MB through one page`,
  run: async (ctx) => {
    const site = await startNetworkSite();
    const display = await startXvfb();
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-net-'));
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser({
        executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
        profileDir: profile,
        display: display.display,
      });
      const b = browser;
      const registry = new CaptureRegistry();
      let n = 0;
      type Mode = 'off' | 'on' | 'session';
      const trial = async (mode: Mode): Promise<{ ms: number; lines: number }> => {
        const id = `load-${n++}`;
        const on = mode === 'on';
        const mp = await openPage(b, id);
        try {
          if (on) {
            registry.attach(mp);
            await registry.ready(id);
          } else if (mode === 'session') {
            // Control: a second session with the Network and Page domains on, and no capture:
            // what listening on a session of our own (instead of puppeteer's) would cost.
            const second = await mp.page.createCDPSession();
            await second.send('Network.enable', { maxPostDataSize: 0 });
            await second.send('Page.enable');
          }
          await mp.page.goto(`${site.url}/many?n=${REQUESTS}`, { waitUntil: 'load' });
          await mp.page.waitForFunction('window.__loadedMs !== undefined', { polling: 50 });
          const ms = (await mp.page.evaluate('window.__loadedMs')) as number;
          let lines = 0;
          if (on) {
            // Let the bodies be read before the page goes, so each trial pays its full cost.
            const until = Date.now() + 30_000;
            while (Date.now() < until) {
              const st = registry.stats(id);
              lines = st?.lines ?? 0;
              if (st && st.pending_lines === 0 && lines >= REQUESTS / 2 + 2) break;
              await sleep(50);
            }
          }
          return { ms, lines };
        } finally {
          registry.detach(id);
          await mp.page.close().catch(() => undefined);
        }
      };
      const modes: Mode[] = ['off', 'on', 'session'];
      for (const mode of modes) await trial(mode);
      const times: Record<Mode, number[]> = { off: [], on: [], session: [] };
      const lines: number[] = [];
      for (let i = 0; i < TRIALS; i++) {
        for (const mode of i % 2 ? [...modes].reverse() : modes) {
          const r = await trial(mode);
          times[mode].push(r.ms);
          if (mode === 'on') lines.push(r.lines);
        }
        ctx.progress(`network: trial ${i + 1}/${TRIALS}`);
      }
      const { off, on, session } = times;
      const ratio = median(on) / median(off);

      // 200 MB through one page, capture on.
      const bulk = new CaptureRegistry();
      const mp = await openPage(b, 'bulk');
      bulk.attach(mp);
      await bulk.ready('bulk');
      const before = await liveBytes();
      let maxBytes = 0;
      const sampler = setInterval(() => {
        maxBytes = Math.max(maxBytes, bulk.stats('bulk')?.bytes ?? 0);
      }, 50);
      const count = BULK_MB;
      const started = performance.now();
      try {
        await mp.page.goto(`${site.url}/bulk?count=${count}&kb=1000`, {
          waitUntil: 'domcontentloaded',
        });
        await mp.page.waitForFunction("document.title === 'bulk done'", {
          timeout: 900_000,
          polling: 200,
        });
        const until = Date.now() + 60_000;
        while (Date.now() < until) {
          const st = bulk.stats('bulk');
          if (st && st.pending_lines === 0 && st.mark >= count + 2) break;
          await sleep(100);
        }
      } finally {
        clearInterval(sampler);
      }
      const seconds = (performance.now() - started) / 1000;
      const st = bulk.stats('bulk');
      maxBytes = Math.max(maxBytes, st?.bytes ?? 0);
      const grown = (await liveBytes()) - before;
      bulk.detach('bulk');
      await mp.page.close().catch(() => undefined);
      const released = (await liveBytes()) - before;

      const rows: Row[] = [
        {
          key: 'network.load_ms_off',
          label: `${REQUESTS}-request page load, capture off`,
          value: median(off),
          unit: 'ms',
          detail: `trials ${range(off)} ms`,
        },
        {
          key: 'network.load_ms_on',
          label: `${REQUESTS}-request page load, capture on`,
          value: median(on),
          unit: 'ms',
          detail: `trials ${range(on)} ms; ${median(lines)} lines with bodies per load`,
        },
        {
          key: 'network.load_ratio',
          label: 'load time, capture on / off',
          value: ratio,
          unit: 'x',
          digits: 3,
          target: atMost(1.05, '×'),
          detail: 'medians; off, on and the control take turns, trial by trial',
        },
        {
          key: 'network.session_only_ratio',
          label: '  control: a second Network session alone / off',
          value: median(session) / median(off),
          unit: 'x',
          digits: 3,
          detail: `trials ${range(session)} ms; Network and Page enabled on the page's own session, no capture`,
        },
        {
          key: 'network.store_mb',
          label: `capture store after ${BULK_MB} MB through one page`,
          value: mb(maxBytes),
          unit: 'MB',
          digits: 1,
          target: atMost(mb(DEFAULT_BUDGET_BYTES), 'MB'),
          detail: `highest sample; ${st?.lines ?? 0} lines held, ${st?.dropped_lines ?? 0} dropped; ${mb(st?.raw_bytes_in ?? 0).toFixed(0)} MB in, ${mb(st?.compressed_bytes_out ?? 0).toFixed(0)} MB compressed`,
        },
        {
          key: 'network.process_growth_mb',
          label: 'capturing process memory growth (heap + buffers)',
          value: mb(grown),
          unit: 'MB',
          digits: 1,
          target: atMost(mb(DEFAULT_BUDGET_BYTES) * 1.25, 'MB'),
          detail: `after full collections; ${mb(released).toFixed(1)} MB once the page is detached`,
        },
        {
          key: 'network.bulk_s',
          label: `${BULK_MB} MB of bodies through one page`,
          value: seconds,
          unit: 's',
          digits: 1,
          detail: `${(BULK_MB / seconds).toFixed(1)} MB/s, bodies read and compressed as they come`,
        },
      ];
      return rows;
    } finally {
      await browser?.close().catch(() => undefined);
      await display.stop();
      await site.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  },
};
