import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { startXvfb } from '@persona-browser/xvfb';
import { findBrowserBinary } from '../src/browser/launch';
import type { DetectorSite, HookReport, Signal } from '@persona-browser/testkit/detector-site';
import { startDetectorSite } from '@persona-browser/testkit/detector-site';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * The worker's pages against detector pages served from loopback: this product's own checks
 * (one test per named signal) and two public detectors installed from the registry, BotD and
 * fpscanner. Every result is what the page's own script found and posted back; the test never
 * evaluates anything in the page. The same pages, BotD and fpscanner included, catch a plain
 * puppeteer browser (last block), so the checks can fail.
 */

interface BotdReport {
  bot: boolean;
  botKind: string | null;
  flagged: string[];
  error?: string;
}
interface FpscannerReport {
  bot: boolean;
  details: Record<string, { detected: boolean; severity: string }>;
  error?: string;
}

const signalOf = (signals: Signal[], name: string): Signal => {
  const s = signals.find((x) => x.name === name);
  if (!s) throw new Error(`the page reported no ${name} signal: ${JSON.stringify(signals)}`);
  return s;
};

/** The hooks' report posted after `since`: every call the page saw up to then. */
async function hooksAfter(site: DetectorSite, since: number): Promise<HookReport> {
  const wait = Math.max(0, since - Date.now()) + 1_200;
  await sleep(wait);
  site.reset();
  return site.waitFor<HookReport>('hooks');
}

/** A worker with one page `pageId`, and the detector site it visits. */
interface DetectorRun {
  site: DetectorSite;
  w: RunningWorker;
  /** Opens `url` on the page, which must load it. */
  go(url: string): Promise<void>;
  /** The pages' reports: BotD's and fpscanner's, each once its page ran. */
  publicDetectors(): Promise<{ botd: BotdReport; fpscanner: FpscannerReport }>;
  close(): Promise<void>;
}

async function detectorRun(pageId: string, env: Record<string, string>): Promise<DetectorRun> {
  const site = await startDetectorSite();
  const w = await startWorker({ env });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: pageId } });
  const go = async (url: string): Promise<void> => {
    const nav = await w.call('POST', `/api/v1/ops/${pageId}/navigate`, { body: { url } });
    expect(nav.body).toMatchObject({ success: true, status_code: 200 });
  };
  return {
    site,
    w,
    go,
    async publicDetectors() {
      await go(`${site.url}/botd`);
      const botd = await site.waitFor<BotdReport>('botd');
      await go(`${site.url}/fpscanner`);
      return { botd, fpscanner: await site.waitFor<FpscannerReport>('fpscanner') };
    },
    async close() {
      await w.stop();
      await site.close();
    },
  };
}

/** fpscanner's detections, as `name (severity)`. */
function fpscannerFlags(report: FpscannerReport): string[] {
  expect(report.error).toBeUndefined();
  return Object.entries(report.details)
    .filter(([, v]) => v.detected)
    .map(([k, v]) => `${k} (${v.severity})`);
}

/** What the page's own checks report for a worker started with `env`, then stopped. */
async function ownSignalsOf(pageId: string, env: Record<string, string>): Promise<Signal[]> {
  const run = await detectorRun(pageId, env);
  try {
    await run.go(`${run.site.url}/own`);
    return await run.site.waitFor<Signal[]>('own');
  } finally {
    await run.close();
  }
}

describe('a worker page against the detector pages', () => {
  let run: DetectorRun;
  let site: DetectorSite;
  let w: RunningWorker;
  let own: Signal[];
  let hooks: HookReport;
  let botd: BotdReport;
  let fpscanner: FpscannerReport;

  beforeAll(async () => {
    // As a persona at home is set up: its own time zone and language, not the machine's UTC.
    run = await detectorRun('d', { BROWSER_TIMEZONE: 'Europe/Berlin', BROWSER_LOCALE: 'de-DE' });
    ({ site, w } = run);
    await run.go(`${site.url}/own`);
    own = await site.waitFor<Signal[]>('own');
    // Everything a client does with a page, while the hooks watch the main world: reading it,
    // looking at it, clicking and typing, and the health probe that runs every 2 s.
    for (const [method, route, body] of [
      ['POST', 'ops/d/extract-content', undefined],
      ['GET', 'ops/d/screenshot', undefined],
      ['POST', 'primitive/d/check-visible', { selector: '#btn' }],
      ['POST', 'primitive/d/click-element', { selector: '#field' }],
      ['POST', 'primitive/d/type-text', { text: 'hallo' }],
      ['POST', 'primitive/d/hover-element', { selector: '#btn' }],
      ['POST', 'primitive/d/scroll-page', { distance: 200 }],
      ['POST', 'ops/d/extract-content', undefined],
    ] as const) {
      const r = await w.call(method, `/api/v1/${route}`, body ? { body } : {});
      expect({ route, status: r.status, success: r.body.success }).toEqual({
        route,
        status: 200,
        success: true,
      });
    }
    hooks = await hooksAfter(site, Date.now() + 4_500);
    ({ botd, fpscanner } = await run.publicDetectors());
  }, 120_000);
  afterAll(() => run?.close());

  const passes = (name: string): void => {
    const s = signalOf(own, name);
    // The detail is in the failure message: what the page saw.
    expect(s).toEqual({ name, pass: true, detail: s.detail });
  };

  test('webdriver: navigator.webdriver is false in page and worker, from the native getter', () =>
    passes('webdriver'));
  test('runtime_enable: console.debug of an Error does not read its stack (no Runtime domain)', () =>
    passes('runtime_enable'));
  test('ua_consistency: user agent, platform, client hints and full version list agree, page and worker', () =>
    passes('ua_consistency'));
  test('hardware: cores and memory agree in page and worker', () => passes('hardware'));
  test('webgl: the page has WebGL, with the same vendor and renderer as its worker', () =>
    passes('webgl'));
  test('languages: navigator.languages, language and Intl agree, page and worker', () =>
    passes('languages'));
  test('timezone: a real zone, not UTC, the same in page and worker', () => passes('timezone'));
  test('screen: a taskbar’s worth of availHeight less than height; window chrome around the page', () =>
    passes('screen'));
  test('plugins: the PDF viewer and its plugins, as a desktop Chrome lists them', () =>
    passes('plugins'));
  test('native_functions: what evasions would patch is native, named and unproxied', () =>
    passes('native_functions'));
  test('iframe: a srcdoc frame is a real window that agrees with the page', () => passes('iframe'));
  test('chrome_object: window.chrome is there with native members only', () =>
    passes('chrome_object'));
  test('every check the page ran is one of the named signals above', () => {
    expect(own.map((s) => s.name).sort()).toEqual(
      [
        'chrome_object',
        'hardware',
        'iframe',
        'languages',
        'native_functions',
        'plugins',
        'runtime_enable',
        'screen',
        'timezone',
        'ua_consistency',
        'webdriver',
        'webgl',
      ].sort(),
    );
  });

  test('stack_markers: main-world hooks on DOM reads see no call from the worker, no pptr: stack', () => {
    expect(hooks.selfTestSeen).toBe(true);
    expect(hooks.foreign).toEqual([]);
  });

  test('BotD: not a bot, no detector flagged', () => {
    expect(botd).toEqual({ bot: false, botKind: null, flagged: [] });
  });

  test('fpscanner: no detection but the low-severity software renderer (SwiftShader)', () => {
    const detected = fpscannerFlags(fpscanner);
    // The one accepted: a machine without a GPU renders WebGL in software, as Chrome itself
    // falls back to on such machines; no WebGL at all, or a page and worker that disagree,
    // are high-severity signals instead.
    expect(detected.filter((d) => d !== 'hasSwiftshaderRenderer (low)')).toEqual([]);
  });
});

describe('a persona that tells Windows (BROWSER_PLATFORM=windows) on this Linux machine', () => {
  interface System {
    ua: string;
    platform: string;
    hint: string | null;
  }
  interface FrameReport extends System {
    worker: System & { inner: System };
  }
  let run: DetectorRun;
  let own: Signal[];
  let frame: FrameReport;
  let workers: { shared: System; service: System; error?: string };
  let fpscanner: FpscannerReport;
  let botd: BotdReport;
  /** The same browser undisguised: a disguised one keeps its real brands. */
  let realSignals: Signal[];

  beforeAll(async () => {
    realSignals = await ownSignalsOf('real', {
      BROWSER_TIMEZONE: 'Europe/Berlin',
      BROWSER_LOCALE: 'de-DE',
    });
    run = await detectorRun('win', {
      BROWSER_PLATFORM: 'windows',
      BROWSER_TIMEZONE: 'Europe/Berlin',
      BROWSER_LOCALE: 'de-DE',
    });
    await run.go(`${run.site.url}/own`);
    own = await run.site.waitFor<Signal[]>('own');
    await run.go(`${run.site.url}/cross`);
    frame = await run.site.waitFor<FrameReport>('frame');
    await run.go(`${run.site.url}/workers`);
    workers = await run.site.waitFor('workers');
    ({ botd, fpscanner } = await run.publicDetectors());
  }, 180_000);
  afterAll(() => run?.close());

  test('ua_consistency: page and worker agree, and every surface says Windows', () => {
    const s = signalOf(own, 'ua_consistency');
    expect(s).toEqual({ name: 'ua_consistency', pass: true, detail: s.detail });
    const detail = s.detail as { oses: Record<string, string>; ua: string };
    expect(Object.values(detail.oses)).toEqual(Object.values(detail.oses).map(() => 'Windows'));
    expect(detail.ua).toMatch(/^Mozilla\/5\.0 \(Windows NT 10\.0; Win64; x64\) AppleWebKit/);
  });

  test('the brands and full version list are the real browser’s', () => {
    type Brands = { brands: string[]; full: string[]; uaFullVersion: string };
    const real = signalOf(realSignals, 'ua_consistency').detail as Brands;
    const told = signalOf(own, 'ua_consistency').detail as Brands;
    expect(real.full.length).toBeGreaterThan(1);
    expect({ brands: told.brands, full: told.full, version: told.uaFullVersion }).toEqual({
      brands: real.brands,
      full: real.full,
      version: real.uaFullVersion,
    });
  });

  test('every other named signal still passes', () => {
    const failing = own.filter((x) => !x.pass);
    expect(failing).toEqual([]);
  });

  test('a cross-site frame, its worker and a worker it starts all say Windows', () => {
    const told = [frame, frame.worker, frame.worker.inner].map((x) => ({
      platform: x.platform,
      hint: x.hint,
      windowsUa: /\(Windows NT 10\.0; Win64; x64\)/.test(x.ua),
    }));
    expect(told).toEqual(told.map(() => ({ platform: 'Win32', hint: 'Windows', windowsUa: true })));
  });

  test('a shared worker and a service worker say Windows too', () => {
    expect(workers.error).toBeUndefined();
    const told = [workers.shared, workers.service].map((x) => ({
      platform: x.platform,
      hint: x.hint,
      ua: x.ua,
    }));
    const ua = (signalOf(own, 'ua_consistency').detail as { ua: string }).ua;
    expect(told).toEqual(told.map(() => ({ platform: 'Win32', hint: 'Windows', ua })));
  });

  test('the requests say Windows too: User-Agent and Sec-CH-UA-Platform headers', () => {
    const seen = (where: string) => {
      const h = run.site.headersOf(where);
      return { where, ua: h?.['user-agent'], platform: h?.['sec-ch-ua-platform'] };
    };
    const windowsUa = expect.stringMatching(/\(Windows NT 10\.0; Win64; x64\)/);
    for (const where of ['/own', '/frame', '/report/frame']) {
      expect(seen(where)).toEqual({ where, ua: windowsUa, platform: '"Windows"' });
    }
    // Chromium sends no client hints from shared and service workers (measured without any
    // override): their requests carry the user agent alone.
    for (const where of ['/seen-shared', '/seen-service']) {
      expect(seen(where)).toEqual({ where, ua: windowsUa, platform: undefined });
    }
  });

  test('BotD and fpscanner: what each flags for a Windows claim on Linux', () => {
    expect(botd).toEqual({ bot: false, botKind: null, flagged: [] });
    expect(fpscannerFlags(fpscanner)).toEqual(['hasSwiftshaderRenderer (low)']);
  });
});

describe('control: a plain puppeteer browser is caught by the same pages', () => {
  let display: VirtualDisplay;
  let browser: Browser;
  let site: DetectorSite;
  let page: Page;
  let own: Signal[];
  let hooks: HookReport;
  let botd: BotdReport;
  let fpscanner: FpscannerReport;
  let profile: string;

  beforeAll(async () => {
    site = await startDetectorSite();
    display = await startXvfb();
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-control-'));
    // Puppeteer as it comes: its default switches, Runtime on, reads in the main world.
    browser = await puppeteer.launch({
      executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
      headless: false,
      userDataDir: profile,
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
      ],
      env: { ...process.env, DISPLAY: display.display },
    });
    page = await browser.newPage();
    await page.goto(`${site.url}/own`);
    own = await site.waitFor<Signal[]>('own');
    await page.content();
    await page.title();
    await page.$('#btn');
    hooks = await hooksAfter(site, Date.now());
    await page.goto(`${site.url}/botd`);
    botd = await site.waitFor<BotdReport>('botd');
    await page.goto(`${site.url}/fpscanner`);
    fpscanner = await site.waitFor<FpscannerReport>('fpscanner');
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await display?.stop();
    await site?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  test('webdriver is flagged', () => {
    expect(signalOf(own, 'webdriver').pass).toBe(false);
  });
  test('runtime_enable is flagged', () => {
    expect(signalOf(own, 'runtime_enable').pass).toBe(false);
  });
  test('stack_markers: the hooks see puppeteer read the page, with its pptr: marker', () => {
    expect(hooks.foreign.map((c) => c.hook)).toEqual(
      expect.arrayContaining(['Element.outerHTML', 'XMLSerializer.serializeToString']),
    );
    expect(hooks.foreign.some((c) => /pptr:/.test(c.stack))).toBe(true);
  });
  test('BotD: a bot, flagged by its webdriver detector', () => {
    expect(botd).toEqual({
      bot: true,
      botKind: 'headless_chrome',
      flagged: expect.arrayContaining(['detectWebDriver:headless_chrome']),
    });
  });
  test('fpscanner: a bot, flagged high for webdriver and for the DevTools Runtime domain', () => {
    expect(fpscanner.bot).toBe(true);
    expect(fpscannerFlags(fpscanner)).toEqual(
      expect.arrayContaining(['hasWebdriver (high)', 'hasCDP (high)']),
    );
  });
});
