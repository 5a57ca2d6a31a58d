import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { startXvfb } from '@persona-browser/xvfb';
import { findBrowserBinary } from '../src/browser/launch';
import type {
  DetectorSite,
  FingerprintReport,
  HeadlessDetectorReport,
  HookReport,
  Signal,
} from '@persona-browser/testkit/detector-site';
import { fingerprintClaims, startDetectorSite } from '@persona-browser/testkit/detector-site';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * The worker's pages against detector pages served from loopback: this product's own checks
 * (one test per named signal) and four public detectors installed from the registry: BotD,
 * fpscanner, headless-detector (verdicts) and FingerprintJS (a fingerprint: its components must
 * agree with what the persona claims, and its visitor id stay across visits). Every result is
 * what the page's own script found and posted back; the test never evaluates anything in the
 * page. The same pages catch a plain puppeteer browser (last block), and FingerprintJS shows
 * the contradiction of puppeteer told a Windows user agent, so every check can fail.
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
interface PublicReports {
  botd: BotdReport;
  fpscanner: FpscannerReport;
  headless: HeadlessDetectorReport;
  /** FingerprintJS on a first and a second visit of its page. */
  fingerprint: [FingerprintReport, FingerprintReport];
}

/**
 * headless-detector's checks that a person's browser on this machine trips too: `webgl-software`
 * (no GPU: SwiftShader, which fpscanner rates low) and `adv-runtime` (`window.chrome` without
 * `chrome.runtime`, as every desktop Chrome's web page has it; the library scores it 0 and
 * calls it normal in its own comment). Its score stays under its "Minor Warnings" line (0.15).
 */
const HEADLESS_DETECTOR_ACCEPTED = ['webgl-software', 'adv-runtime'];

const signalOf = (signals: Signal[], name: string): Signal => {
  const s = signals.find((x) => x.name === name);
  if (!s) throw new Error(`the page reported no ${name} signal: ${JSON.stringify(signals)}`);
  return s;
};

/**
 * A hooks' report made from now on: every call the page saw up to then. The page reports every
 * half second; the first report to come in from now on may have been made before, the next one
 * was made half a second after it.
 */
async function hooksFromNow(site: DetectorSite): Promise<HookReport> {
  site.forget('hooks');
  await site.waitFor<HookReport>('hooks');
  site.forget('hooks');
  return site.waitFor<HookReport>('hooks');
}

/** A worker with one page `pageId`, and the detector site it visits. */
interface DetectorRun {
  site: DetectorSite;
  w: RunningWorker;
  /** Opens `url` on the page, which must load it. */
  go(url: string): Promise<void>;
  /** The public detectors' reports, each once its page ran (FingerprintJS twice). */
  publicDetectors(): Promise<PublicReports>;
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
      const visit = async <T>(name: string): Promise<T> => {
        site.forget(name);
        await go(`${site.url}/${name}`);
        return site.waitFor<T>(name);
      };
      const botd = await visit<BotdReport>('botd');
      const fpscanner = await visit<FpscannerReport>('fpscanner');
      const headless = await visit<HeadlessDetectorReport>('headless-detector');
      const first = await visit<FingerprintReport>('fingerprintjs');
      const second = await visit<FingerprintReport>('fingerprintjs');
      return { botd, fpscanner, headless, fingerprint: [first, second] };
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

function expectNormalByHeadlessDetector(report: HeadlessDetectorReport): void {
  expect(report.error).toBeUndefined();
  expect({
    normal: report.score <= 0.15,
    unexpected: report.detections.filter((d) => !HEADLESS_DETECTOR_ACCEPTED.includes(d)),
  }).toEqual({ normal: true, unexpected: [] });
}

/** The screen the own page saw (its `screen` signal), for FingerprintJS to agree with. */
function screenOf(own: Signal[]): [number, number] {
  const detail = signalOf(own, 'screen').detail as { screen: [number, number] };
  return detail.screen;
}

/**
 * FingerprintJS, twice: every source of the system names the one claimed, zone, language and
 * screen are the persona's, the vendor and brands a Chrome's, and the visitor id is the same.
 */
function expectFingerprintOf(
  [first, second]: [FingerprintReport, FingerprintReport],
  claim: { system: string; timezone: string; language: string; screen: [number, number] },
): void {
  expect([first.error, second.error]).toEqual([undefined, undefined]);
  const told = fingerprintClaims(first);
  expect(told).toEqual({
    systems: { userAgent: claim.system, platform: claim.system, hints: claim.system },
    timezone: claim.timezone,
    language: claim.language,
    dateTimeLocale: claim.language,
    screen: claim.screen,
    vendor: 'Google Inc.',
    flavors: ['chrome'],
    brands: [expect.stringMatching(/^(Chromium|Google Chrome)$/)],
  });
  expect(second.visitorId).toBe(first.visitorId);
  expect(fingerprintClaims(second)).toEqual(told);
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

/**
 * The default persona's own signals, kept by the first block: the same browser undisguised,
 * which the Windows block compares its brands with (read again when that block runs alone).
 */
let defaultSignals: Signal[] | null = null;

describe('a worker page against the detector pages', () => {
  let run: DetectorRun;
  let site: DetectorSite;
  let w: RunningWorker;
  let own: Signal[];
  let hooks: HookReport;
  let botd: BotdReport;
  let fpscanner: FpscannerReport;
  let headless: HeadlessDetectorReport;
  let fingerprint: [FingerprintReport, FingerprintReport];

  beforeAll(async () => {
    // As a persona at home is set up: its own time zone and language, not the machine's UTC.
    run = await detectorRun('d', { BROWSER_TIMEZONE: 'Europe/Berlin', BROWSER_LOCALE: 'de-DE' });
    ({ site, w } = run);
    await run.go(`${site.url}/own`);
    own = await site.waitFor<Signal[]>('own');
    defaultSignals = own;
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
    // Time itself is tested: the hooks watch the page through two health probes (every 2 s).
    await sleep(4_500);
    hooks = await hooksFromNow(site);
    ({ botd, fpscanner, headless, fingerprint } = await run.publicDetectors());
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

  test('headless-detector: a normal browser by its own score, only the accepted checks', () => {
    expectNormalByHeadlessDetector(headless);
  });

  test('FingerprintJS: its components tell what the persona claims; the visitor id stays', () => {
    expectFingerprintOf(fingerprint, {
      system: 'Linux',
      timezone: 'Europe/Berlin',
      language: 'de-DE',
      screen: screenOf(own),
    });
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
  let headless: HeadlessDetectorReport;
  let fingerprint: [FingerprintReport, FingerprintReport];
  /** The same browser undisguised: a disguised one keeps its real brands. */
  let realSignals: Signal[];

  beforeAll(async () => {
    realSignals =
      defaultSignals ??
      (await ownSignalsOf('real', { BROWSER_TIMEZONE: 'Europe/Berlin', BROWSER_LOCALE: 'de-DE' }));
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
    ({ botd, fpscanner, headless, fingerprint } = await run.publicDetectors());
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

  test('headless-detector: a normal browser by its own score', () => {
    expectNormalByHeadlessDetector(headless);
  });

  test('FingerprintJS: Windows from every source, the persona’s zone and language, a stable id', () => {
    expectFingerprintOf(fingerprint, {
      system: 'Windows',
      timezone: 'Europe/Berlin',
      language: 'de-DE',
      screen: screenOf(own),
    });
  });
});

describe('a persona that claims the Google Chrome brand (BROWSER_BRAND=google-chrome)', () => {
  type Brands = { brands: string[]; full: string[]; uaFullVersion: string; ua: string };
  let run: DetectorRun;
  let own: Signal[];
  let workers: { shared: { brands: string[] }; service: { brands: string[] }; error?: string };

  beforeAll(async () => {
    run = await detectorRun('brand', {
      BROWSER_BRAND: 'google-chrome',
      BROWSER_TIMEZONE: 'Europe/Berlin',
      BROWSER_LOCALE: 'de-DE',
    });
    await run.go(`${run.site.url}/own`);
    own = await run.site.waitFor<Signal[]>('own');
    await run.go(`${run.site.url}/workers`);
    workers = await run.site.waitFor('workers');
  }, 120_000);
  afterAll(() => run?.close());

  test('page and worker list Google Chrome, Chromium and a GREASE brand, of the real version', () => {
    const s = signalOf(own, 'ua_consistency');
    expect(s).toEqual({ name: 'ua_consistency', pass: true, detail: s.detail });
    const told = s.detail as Brands;
    const major = /Chrome\/(\d+)/.exec(told.ua)?.[1];
    expect(told.brands).toHaveLength(3);
    expect(told.brands).toEqual(
      expect.arrayContaining([`Google Chrome/${major}`, `Chromium/${major}`]),
    );
    expect(told.full).toEqual(
      expect.arrayContaining([
        `Google Chrome/${told.uaFullVersion}`,
        `Chromium/${told.uaFullVersion}`,
      ]),
    );
    // The system is the machine's own, untouched.
    expect(Object.values((s.detail as { oses: object }).oses)).toEqual(
      Object.values((s.detail as { oses: object }).oses).map(() => 'Linux'),
    );
  });

  test('the Sec-CH-UA header and shared and service workers claim it too', () => {
    expect(run.site.headersOf('/own')?.['sec-ch-ua']).toMatch(/"Google Chrome";v="\d+"/);
    expect(workers.error).toBeUndefined();
    const brands = (signalOf(own, 'ua_consistency').detail as Brands).brands;
    expect([workers.shared.brands, workers.service.brands]).toEqual([brands, brands]);
  });

  test('every named signal passes', () => {
    expect(own.filter((x) => !x.pass)).toEqual([]);
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
  let headless: HeadlessDetectorReport;
  /** FingerprintJS after puppeteer's own way of claiming Windows: `page.setUserAgent`. */
  let told: FingerprintReport;
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
    hooks = await hooksFromNow(site);
    await page.goto(`${site.url}/botd`);
    botd = await site.waitFor<BotdReport>('botd');
    await page.goto(`${site.url}/fpscanner`);
    fpscanner = await site.waitFor<FpscannerReport>('fpscanner');
    await page.goto(`${site.url}/headless-detector`);
    headless = await site.waitFor<HeadlessDetectorReport>('headless-detector');
    await page.setUserAgent(
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36',
    );
    await page.goto(`${site.url}/fingerprintjs`);
    told = await site.waitFor<FingerprintReport>('fingerprintjs');
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
  test('headless-detector: more than minor warnings, its webdriver check flagged', () => {
    expect(headless.error).toBeUndefined();
    expect(headless.score).toBeGreaterThan(0.15);
    expect(headless.detections).toEqual(expect.arrayContaining(['webdriver-status']));
  });
  test('FingerprintJS: a Windows user agent on a Linux platform, no client hints, UTC', () => {
    expect(told.error).toBeUndefined();
    expect(fingerprintClaims(told)).toMatchObject({
      systems: { userAgent: 'Windows', platform: 'Linux', hints: 'none' },
      timezone: 'UTC',
    });
    // The assertion the personas pass fails on it.
    const claim = {
      system: 'Windows',
      timezone: 'UTC',
      language: 'en-US',
      screen: told.components.screenResolution,
    };
    expect(() => expectFingerprintOf([told, told], claim)).toThrow();
  });
});
