import http from 'node:http';
import type { AddressInfo } from 'node:net';
import puppeteer from 'puppeteer-core';
import { startXvfb } from '@persona-browser/xvfb';
import { chromiumArgs, findBrowserBinary, sandboxArgs } from '../src/browser/launch';
import { startWorker, waitInitialized } from './spawn';

/**
 * `npm run bench:window-race`: what a page's first inline script reads of its window
 * (`outerWidth`, `outerHeight`, `innerWidth`, `innerHeight`) on fresh pages, each opened and
 * sent to a loopback page at once, then closed. Counted for a worker (create-page, navigate) and,
 * as the control, for a plain puppeteer Chromium with the worker's switches on a display of its
 * own (newPage, goto). A read of 0 × 0 outside is the window not known to the page yet.
 * `BENCH_RACE_PAGES` (default 20) pages each.
 */

const PAGES = Number(process.env.BENCH_RACE_PAGES ?? 20);
const PROBE = `<!doctype html><script>
fetch('/seen?' + [outerWidth, outerHeight, innerWidth, innerHeight].join('x'), { method: 'POST' });
</script>`;

interface Probe {
  url: string;
  next(): Promise<string>;
  close(): void;
}

function probeSite(): Promise<Probe> {
  let waiting: ((seen: string) => void) | null = null;
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      res.end('ok');
      waiting?.(decodeURIComponent((req.url ?? '').replace(/^\/seen\?/, '')));
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end(PROBE);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/p`,
        next: () => new Promise((r) => (waiting = r)),
        close: () => server.close(),
      }),
    ),
  );
}

function tally(label: string, seen: string[]): void {
  const counts = new Map<string, number>();
  for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
  const zero = seen.filter((s) => s.startsWith('0x0x')).length;
  process.stdout.write(`${label}: outer 0 x 0 in ${zero} of ${seen.length} fresh pages\n`);
  for (const [s, n] of counts) process.stdout.write(`  ${s} (outer, inner): ${n}\n`);
}

async function viaWorker(site: Probe): Promise<string[]> {
  const w = await startWorker({ BROWSER_TIMEZONE: 'Europe/Berlin' });
  const seen: string[] = [];
  try {
    await waitInitialized(w);
    for (let i = 0; i < PAGES; i++) {
      const id = `race-${i}`;
      await w.client.json('POST', '/api/v1/ops/create-page', { page_id: id });
      const next = site.next();
      await w.client.json('POST', `/api/v1/ops/${id}/navigate`, { url: site.url });
      seen.push(await next);
      await w.client.json('POST', `/api/v1/ops/${id}/destroy-page`, {});
    }
  } finally {
    await w.stop();
  }
  return seen;
}

async function viaPlainPuppeteer(site: Probe): Promise<string[]> {
  const display = await startXvfb();
  const browser = await puppeteer.launch({
    executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
    headless: false,
    pipe: true,
    defaultViewport: null,
    args: [
      ...chromiumArgs({ window: display.workArea }),
      ...sandboxArgs(false, process.getuid?.() ?? null),
    ],
    env: { ...process.env, DISPLAY: display.display },
  });
  const seen: string[] = [];
  try {
    for (let i = 0; i < PAGES; i++) {
      const page = await browser.newPage();
      const next = site.next();
      await page.goto(site.url);
      seen.push(await next);
      await page.close();
    }
  } finally {
    await browser.close();
    await display.stop();
  }
  return seen;
}

async function main(): Promise<void> {
  const site = await probeSite();
  try {
    tally('worker (create-page, navigate)', await viaWorker(site));
    tally('plain puppeteer, same switches (newPage, goto)', await viaPlainPuppeteer(site));
  } finally {
    site.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
