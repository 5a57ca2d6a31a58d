import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { DetectorSite, HookReport, Signal } from '@persona-browser/testkit/detector-site';
import { startDetectorSite } from '@persona-browser/testkit/detector-site';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';

/**
 * What a page driven by an outside DevTools client (the endpoint of cdp-endpoint.test.ts) tells
 * a detector, beside a pool page of the same worker. Every verdict is what the detector page's
 * own script found and posted back. Two workers, started together: one as it comes
 * (DEVTOOLS_QUIET_RUNTIME on) and one with the option off, the control, where a client's
 * `Runtime.enable` reaches the page as it did before the option.
 */

interface FpscannerReport {
  bot: boolean;
  details: Record<string, { detected: boolean; severity: string }>;
  error?: string;
}
type Body = Record<string, any>;

let site: DetectorSite;
let quiet: RunningWorker;
let plain: RunningWorker;

beforeAll(async () => {
  site = await startDetectorSite();
  [quiet, plain] = await Promise.all([
    startWorker({}),
    startWorker({ env: { DEVTOOLS_QUIET_RUNTIME: 'false' } }),
  ]);
  await Promise.all([quiet.waitInitialized(), plain.waitInitialized()]);
  for (const w of [quiet, plain]) {
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'pool' } });
  }
}, 120_000);
afterAll(async () => {
  await Promise.all([quiet?.stop(), plain?.stop()]);
  await site?.close();
});

const connect = async (w: RunningWorker): Promise<Browser> => {
  const version = await w.call<Body>('GET', '/json/version');
  return puppeteer.connect({
    browserWSEndpoint: version.body.webSocketDebuggerUrl as string,
    headers: { authorization: `Bearer ${KEY}` },
    defaultViewport: null,
  });
};

/** The detector's own checks as a pool page of `w` saw them (opened through the API). */
async function poolSignals(w: RunningWorker): Promise<Signal[]> {
  site.reset();
  const nav = await w.call('POST', '/api/v1/ops/pool/navigate', {
    body: { url: `${site.url}/own` },
  });
  expect(nav.body).toMatchObject({ success: true, status_code: 200 });
  const signals = await site.waitFor<Signal[]>('own');
  // Away again: its hooks' reports would mix with those of the client's page.
  await w.call('POST', '/api/v1/ops/pool/navigate', { body: { url: `${site.url}/none` } });
  return signals;
}

/** The detector's own checks as `page` saw them, opened by the client. */
async function clientSignals(page: Page): Promise<Signal[]> {
  site.reset();
  await page.goto(`${site.url}/own`, { waitUntil: 'load' });
  return site.waitFor<Signal[]>('own');
}

/** The names of the checks whose verdicts differ between two runs of the page. */
const differing = (a: Signal[], b: Signal[]): string[] =>
  a.filter((s) => b.find((t) => t.name === s.name)?.pass !== s.pass).map((s) => s.name);

const verdict = (signals: Signal[], name: string): Signal | undefined =>
  signals.find((s) => s.name === name);

/** fpscanner's detections on `page`, as `name (severity)`. */
async function fpscannerFlags(page: Page): Promise<string[]> {
  site.reset();
  await page.goto(`${site.url}/fpscanner`, { waitUntil: 'load' });
  const report = await site.waitFor<FpscannerReport>('fpscanner');
  expect(report.error).toBeUndefined();
  return Object.entries(report.details)
    .filter(([, v]) => v.detected)
    .map(([k, v]) => `${k} (${v.severity})`);
}

/** What the client hears of a `console.log` the page makes. */
async function consoleSeen(page: Page): Promise<string[]> {
  const heard: string[] = [];
  const listen = (m: { text(): string }): void => void heard.push(m.text());
  page.on('console', listen);
  try {
    await page.evaluate(() => setTimeout(() => console.log('from the page'), 0));
    // A later timer of the page's: once its answer is back, the message, logged before it on the
    // same connection, has reached the client if it ever will.
    await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
    return heard;
  } finally {
    page.off('console', listen);
  }
}

describe('control: DEVTOOLS_QUIET_RUNTIME=false passes a client’s Runtime.enable to the page', () => {
  let client: Browser;
  let page: Page;
  let pool: Signal[];
  let own: Signal[];
  beforeAll(async () => {
    pool = await poolSignals(plain);
    client = await connect(plain);
    page = await client.newPage();
    own = await clientSignals(page);
  });
  afterAll(() => client?.disconnect());

  test('the client’s page differs from the pool’s in runtime_enable alone, which trips', () => {
    expect(verdict(pool, 'runtime_enable')?.pass).toBe(true);
    // V8 formats the Error's stack for the client: the page's Error.prepareStackTrace runs.
    expect(verdict(own, 'runtime_enable')).toMatchObject({
      pass: false,
      detail: { prepareStackTrace: true },
    });
    expect(differing(pool, own)).toEqual(['runtime_enable']);
  });

  test('the page’s console messages reach the client', async () => {
    expect(await consoleSeen(page)).toEqual(['from the page']);
  });

  test('fpscanner flags the client’s page high for the DevTools Runtime domain (hasCDP)', async () => {
    expect(await fpscannerFlags(page)).toContain('hasCDP (high)');
  });
});

describe('DEVTOOLS_QUIET_RUNTIME on (the default): the client’s Runtime.enable stays off its pages', () => {
  let client: Browser;
  let page: Page;
  let pool: Signal[];
  let own: Signal[];
  beforeAll(async () => {
    pool = await poolSignals(quiet);
    client = await connect(quiet);
    page = await client.newPage();
    own = await clientSignals(page);
  });
  afterAll(() => client?.disconnect());

  test('the client’s page tells the detector what the pool’s page tells it', () => {
    expect(verdict(own, 'runtime_enable')).toEqual({
      name: 'runtime_enable',
      pass: true,
      detail: { prepareStackTrace: false, stack_getter: false },
    });
    expect(differing(pool, own)).toEqual([]);
  });

  test('puppeteer’s evaluate, $, waitForSelector and frames work, in the page’s main world', async () => {
    // The page's own top-level binding: seen from its main world only, not an isolated one.
    expect(await page.evaluate('typeof own')).toBe('object');
    const button = await page.$('#btn');
    expect(await button?.evaluate((b) => b.textContent)).toBe('Press');
    await page.evaluate(() => {
      setTimeout(
        () => document.body.append(Object.assign(document.createElement('i'), { id: 'late' })),
        300,
      );
    });
    expect(await (await page.waitForSelector('#late'))?.evaluate((i) => i.id)).toBe('late');
    // The detector's srcdoc frame: an expando the page sets on its window is seen in its world.
    const frame = page.frames().find((f) => f !== page.mainFrame());
    if (!frame) throw new Error('no frame');
    await page.evaluate(() => Reflect.set(window.frames[0] ?? {}, 'marker', 'set by the page'));
    expect(
      await frame.evaluate(() => [Reflect.get(window, 'marker'), document.body.textContent]),
    ).toEqual(['set by the page', 'frame']);
  });

  test('a navigation replaces the context, which the client follows; the probe stays quiet', async () => {
    await page.evaluate(() => Reflect.set(window, 'before', 1));
    site.reset();
    await page.goto(`${site.url}/own?again`, { waitUntil: 'load' });
    const again = await site.waitFor<Signal[]>('own');
    expect(
      await page.evaluate(() => [typeof Reflect.get(window, 'before'), document.title]),
    ).toEqual(['undefined', 'detector']);
    expect(await page.evaluate('typeof own')).toBe('object');
    expect(verdict(again, 'runtime_enable')?.pass).toBe(true);
    expect(await page.$eval('#text', (p) => p.textContent)).toMatch(/watches who reads it/);
  });

  test('fpscanner flags the client’s page as it flags the pool’s: not for the Runtime domain', async () => {
    const flags = await fpscannerFlags(page);
    expect(flags).not.toContain('hasCDP (high)');
    site.reset();
    const nav = await quiet.call('POST', '/api/v1/ops/pool/navigate', {
      body: { url: `${site.url}/fpscanner` },
    });
    expect(nav.status).toBe(200);
    const report = await site.waitFor<FpscannerReport>('fpscanner');
    const poolFlags = Object.entries(report.details)
      .filter(([, v]) => v.detected)
      .map(([k, v]) => `${k} (${v.severity})`);
    expect(flags).toEqual(poolFlags);
  });

  test('what is lost: the page’s console messages do not reach the client', async () => {
    expect(await consoleSeen(page)).toEqual([]);
  });

  test('what remains: the client’s own main-world reads (page.content) show in the page’s hooks, pptr: marked', async () => {
    site.reset();
    await page.goto(`${site.url}/own`, { waitUntil: 'load' });
    await site.waitFor<Signal[]>('own');
    expect(await page.content()).toMatch(/watches who reads it/);
    // The page reports what its hooks saw every half second; a report from before the read may
    // still be on its way.
    const hooks = await until(
      async () => {
        const h = await site.waitFor<HookReport>('hooks');
        return h.foreign.some((c) => c.hook === 'XMLSerializer.serializeToString') ? h : null;
      },
      10_000,
      'a hooks report that saw the client’s page.content read',
    );
    expect(hooks.selfTestSeen).toBe(true);
    expect(hooks.foreign.map((c) => c.hook)).toContain('XMLSerializer.serializeToString');
    expect(hooks.foreign.some((c) => /pptr:/.test(c.stack))).toBe(true);
  });

  test('Playwright’s evaluate and a locator’s click work on its page, and the probe stays quiet', async () => {
    const browser = await chromium.connectOverCDP(quiet.url, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    try {
      const context = browser.contexts()[0];
      if (!context) throw new Error('no default context');
      const pwPage = await context.newPage();
      site.reset();
      await pwPage.goto(`${site.url}/own`);
      const seen = await site.waitFor<Signal[]>('own');
      expect(verdict(seen, 'runtime_enable')?.pass).toBe(true);
      expect(differing(pool, seen)).toEqual([]);
      expect(await pwPage.evaluate('typeof own')).toBe('object');
      await pwPage.evaluate(() => {
        document
          .querySelector('#btn')
          ?.addEventListener('click', (e) => Reflect.set(window, 'clicked', e.isTrusted));
      });
      await pwPage.locator('#btn').click();
      expect(await pwPage.evaluate(() => Reflect.get(window, 'clicked'))).toBe(true);
      await pwPage.goto(`${site.url}/own?playwright-again`);
      expect(await pwPage.locator('#text').textContent()).toMatch(/watches who reads it/);
    } finally {
      await browser.close();
    }
  });
});
