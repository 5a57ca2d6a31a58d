import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Browser } from 'puppeteer-core';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { startXvfb } from '@persona-browser/xvfb';
import { findBrowserBinary, launchBrowser } from '../src/browser/launch';
import { ManagedPage } from '../src/browser/managed-page';
import type { CaptureOptions } from '../src/capture/registry';
import { CaptureRegistry } from '../src/capture/registry';
import { DEFAULT_BUDGET_BYTES } from '../src/capture/store';
import type { NetworkFixture } from '@persona-browser/testkit/network-fixture';
import { TEXT_BODY, startNetworkFixture } from '@persona-browser/testkit/network-fixture';
import { waitInMainWorld } from './main-world';

/**
 * The capture registry driven directly, on a real headed Chromium: the same code path as the
 * worker (CDP events → PageCapture → LineStore), with budgets small enough to fill quickly,
 * one check at the real 30 MB size, memory while streaming, and the plugin blacklist.
 */

let display: VirtualDisplay;
let browser: Browser;
let site: NetworkFixture;
let profile: string;
const pages: ManagedPage[] = [];

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

beforeAll(async () => {
  site = await startNetworkFixture();
  display = await startXvfb();
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-netbudget-'));
  browser = await launchBrowser({
    executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
    profileDir: profile,
    display: display.display,
  });
});
afterAll(async () => {
  for (const p of pages) await p.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await display?.stop();
  await site?.close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
});

async function capturedPage(registry: CaptureRegistry, id: string): Promise<ManagedPage> {
  const page = await browser.newPage();
  const mp = new ManagedPage(id, page);
  pages.push(mp);
  registry.attach(mp);
  await registry.ready(id);
  return mp;
}

/**
 * Heap and memory outside it (buffers), after full collections: the backing stores of dead
 * buffers are freed a moment after the collection that finds them, hence several with pauses.
 */
async function liveBytes(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

interface StreamRun {
  maxBytes: number;
  samples: number;
  ms: number;
}

/** Streams `count` messages of `size` bytes into the page; samples the store while it runs. */
async function stream(
  registry: CaptureRegistry,
  mp: ManagedPage,
  count: number,
  size: number,
  binary: boolean,
): Promise<StreamRun> {
  let maxBytes = 0;
  let samples = 0;
  const sampler = setInterval(() => {
    maxBytes = Math.max(maxBytes, registry.stats(mp.id)?.bytes ?? 0);
    samples += 1;
  }, 20);
  const started = Date.now();
  try {
    await mp.page.goto(
      `${site.url}/ws-stream?count=${count}&size=${size}&binary=${binary ? 1 : 0}`,
      { waitUntil: 'domcontentloaded' },
    );
    await waitInMainWorld(mp, `document.title === 'stream done ${count}'`, 180_000);
    // The close line is the last one the capture makes for this stream.
    const capture = registry.get(mp.id);
    const until = Date.now() + 30_000;
    for (;;) {
      const r = await capture?.query({ since: 0, includeBody: false, urlContains: 'stream' });
      if (r?.websocket.some((l) => l.kind === 'close')) break;
      if (Date.now() > until) throw new Error('the close line never came');
      await new Promise((res) => setTimeout(res, 50));
    }
  } finally {
    clearInterval(sampler);
  }
  maxBytes = Math.max(maxBytes, registry.stats(mp.id)?.bytes ?? 0);
  return { maxBytes, samples, ms: Date.now() - started };
}

describe('budget', () => {
  test('a small budget through the same code path: bounded always, oldest dropped first, newest kept', async () => {
    const budget = 256 * 1024;
    const registry = new CaptureRegistry({ budgetBytes: budget });
    const mp = await capturedPage(registry, 'small');
    // The capture listens on puppeteer's own session of the page, not on a second one.
    expect(registry.get('small')?.session).toBe(mp.session);
    const count = 20_000;
    const run = await stream(registry, mp, count, 300, false);
    expect(run.samples).toBeGreaterThan(5);
    expect(run.maxBytes).toBeLessThanOrEqual(budget);
    const st = registry.stats('small');
    expect(st?.dropped_lines).toBeGreaterThan(0);
    const r = await (
      registry.get('small') as NonNullable<ReturnType<CaptureRegistry['get']>>
    ).query({ since: 0, includeBody: true });
    // Every line ever made is either held or counted as dropped (no full load since the first).
    expect((st?.lines ?? 0) + (st?.dropped_lines ?? 0)).toBe(r.mark);
    // What is held is exactly the newest lines: a run of seqs that ends at the mark.
    const seqs = [...r.http, ...r.websocket].map((l) => l.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(
      Array.from({ length: seqs.length }, (_, i) => r.mark - seqs.length + 1 + i),
    );
    // The oldest lines (the navigation, the document, the first messages) are the ones gone.
    expect(r.http).toEqual([]);
    const received = r.websocket.filter((l) => l.kind === 'received');
    const ns = received.map((l) => (JSON.parse(l.payload as string) as { n: number }).n);
    expect(ns.length).toBeGreaterThan(100);
    expect(ns.length).toBeLessThan(count);
    expect(ns.at(-1)).toBe(count - 1);
    expect(ns).toEqual(Array.from({ length: ns.length }, (_, i) => count - ns.length + i));
    // Compression: more lines are held than their raw size would allow within the budget.
    const raw = received.reduce((acc, l) => acc + (l.payload as string).length, 0);
    expect(raw).toBeGreaterThan(budget);
    expect(r.websocket.at(-1)?.kind).toBe('close');
  });

  test('the real 30 MB budget holds with incompressible payloads, and memory follows it', async () => {
    const registry = new CaptureRegistry();
    const mp = await capturedPage(registry, 'real');
    const before = await liveBytes();
    // 45 MB of random bytes: more than the budget even after compression.
    const run = await stream(registry, mp, 4_500, 10_000, true);
    const st = registry.stats('real');
    expect(DEFAULT_BUDGET_BYTES).toBe(30_000_000);
    expect(st?.budget).toBe(DEFAULT_BUDGET_BYTES);
    expect(run.maxBytes).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
    expect(run.maxBytes).toBeGreaterThan(DEFAULT_BUDGET_BYTES * 0.9);
    expect(st?.dropped_lines).toBeGreaterThan(0);
    const grown = (await liveBytes()) - before;
    // The store itself (≤ 30 MB) plus slack for the CDP connection: not the 45 MB streamed.
    expect(grown).toBeLessThan(DEFAULT_BUDGET_BYTES + 8_000_000);
    registry.detach('real');
    expect(registry.stats('real')).toBeNull();
    // Detached, the store's memory is given back.
    expect((await liveBytes()) - before).toBeLessThan(8_000_000);
  });

  test('memory stays bounded while one page streams 120 MB', async () => {
    const budget = 1_000_000;
    const registry = new CaptureRegistry({ budgetBytes: budget });
    const mp = await capturedPage(registry, 'long');
    const before = await liveBytes();
    const run = await stream(registry, mp, 12_000, 10_000, true);
    expect(run.maxBytes).toBeLessThanOrEqual(budget);
    const st = registry.stats('long');
    expect(st?.dropped_lines).toBeGreaterThan(11_000);
    expect((await liveBytes()) - before).toBeLessThan(8_000_000);
    registry.detach('long');
  });
});

describe('blacklist', () => {
  const opts: CaptureOptions = {};
  test("patterns of the page's site are never stored and are listed; other sites are untouched", async () => {
    const registry = new CaptureRegistry(opts);
    const remove = registry.blacklist.add('127.0.0.1', ['/api/text', /data\.json$/], 'family');
    const mp = await capturedPage(registry, 'black');
    const capture = registry.get('black');
    if (!capture) throw new Error('no capture');
    const until = async (pred: () => Promise<boolean>): Promise<void> => {
      const end = Date.now() + 20_000;
      while (!(await pred())) {
        if (Date.now() > end) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const echoSeen = async () =>
      (await capture.query({ since: 0, includeBody: false })).http.some((l) =>
        l.url.endsWith('/api/echo'),
      );

    await mp.page.goto(`${site.url}/app`, { waitUntil: 'domcontentloaded' });
    await until(echoSeen);
    let r = await capture.query({ since: 0, includeBody: true });
    const urls = r.http.map((l) => l.url);
    expect(urls).toContain(`${site.url}/api/redirect`);
    expect(urls.some((u) => u.includes('/api/text'))).toBe(false);
    expect(urls.some((u) => u.endsWith('/api/data.json'))).toBe(false);
    expect(capture.blacklistInForce()).toEqual(['/api/text', '/data\\.json$/']);

    // localhost is another site: nothing is held back there.
    const other = site.url.replace('127.0.0.1', 'localhost');
    await mp.page.goto(`${other}/app`, { waitUntil: 'domcontentloaded' });
    await until(echoSeen);
    r = await capture.query({ since: 0, includeBody: true });
    expect(r.http.find((l) => l.url === `${other}/api/text`)?.body).toBe(TEXT_BODY);
    expect(r.http.some((l) => l.url === `${other}/api/data.json`)).toBe(true);
    expect(capture.blacklistInForce()).toEqual([]);

    // Removed: the site is captured in full again.
    remove();
    await mp.page.goto(`${site.url}/app`, { waitUntil: 'domcontentloaded' });
    await until(echoSeen);
    r = await capture.query({ since: 0, includeBody: false });
    expect(r.http.some((l) => l.url === `${site.url}/api/text`)).toBe(true);
    expect(capture.blacklistInForce()).toEqual([]);
    registry.detach('black');
  });

  test('a disabled registry captures nothing', async () => {
    const registry = new CaptureRegistry({ enabled: false });
    const mp = await capturedPage(registry, 'off');
    await mp.page.goto(`${site.url}/second-doc`, { waitUntil: 'domcontentloaded' });
    expect(registry.get('off')).toBeUndefined();
    expect(registry.stats('off')).toBeNull();
  });
});
