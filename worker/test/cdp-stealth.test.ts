import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import type { DetectorSite, HookReport, Signal } from '@persona-browser/testkit/detector-site';
import { startDetectorSite } from '@persona-browser/testkit/detector-site';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';

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
  const nav = await w.call('POST', '/api/v1/ops/pool/navigate', { body: { url: `${site.url}/own` } });
  expect(nav.body).toMatchObject({ success: true, status_code: 200 });
  return site.waitFor<Signal[]>('own');
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

  test('fpscanner flags the client’s page high for the DevTools Runtime domain (hasCDP)', async () => {
    expect(await fpscannerFlags(page)).toContain('hasCDP (high)');
  });
});
