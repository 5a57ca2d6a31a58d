import { TimeoutError } from 'puppeteer-core';
import type { HTTPRequest, Page } from 'puppeteer-core';
import { BrowserFailure, Timeout, errorMessage } from '../errors';
import { about } from '../util';
import type { Call } from './call';
import { loopbackHint } from './loopback-hint';
import type { ManagedPage } from './managed-page';
import { readPageHtml } from './page-html';

export interface NavigateResult {
  url: string;
  status_code: number | null;
  final_url: string;
}

/** Resolves true if the main frame starts loading a new document within `ms`, else false. */
export function navigationStarts(page: Page, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const onRequest = (req: HTTPRequest): void => {
      if (req.isNavigationRequest() && req.frame() === page.mainFrame()) finish(true);
    };
    const finish = (started: boolean): void => {
      clearTimeout(timer);
      page.off('request', onRequest);
      resolve(started);
    };
    const timer = setTimeout(() => finish(false), ms);
    page.on('request', onRequest);
  });
}

/** Stops a load in progress so the page stays usable; never waits long on a sick renderer. */
export async function stopLoading(mp: ManagedPage): Promise<void> {
  await Promise.race([
    mp.session.send('Page.stopLoading').catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
  ]);
}

/**
 * Goes to `url` like a person who pauses before typing an address: about the page's
 * `navigatePauseMs` (2 s unless NAVIGATE_PAUSE_MS says otherwise; 0: no pause), then waits for
 * DOM content loaded. A navigation past its timeout (60 s) is stopped so the page stays usable,
 * and is a 408.
 */
export async function navigate(
  mp: ManagedPage,
  call: Call,
  url: string,
  slowmoMs: number,
): Promise<NavigateResult> {
  const pauseMs = mp.timing.navigatePauseMs;
  if (pauseMs > 0) await call.sleep(about(pauseMs));
  const timeout = mp.timing.navigationTimeoutMs;
  let status: number | null;
  try {
    const response = await call.race(
      mp.page.goto(url, {
        waitUntil: 'domcontentloaded',
        timeout,
        signal: call.signal,
      }),
    );
    status = response?.status() ?? null;
  } catch (err) {
    if (err instanceof TimeoutError) {
      await stopLoading(mp);
      throw new Timeout(`Navigation exceeded ${timeout / 1000} s`, mp.id);
    }
    if (call.signal.aborted) {
      await stopLoading(mp);
      throw err;
    }
    const why = errorMessage(err);
    // A network error on a loopback address inside a container: say where the host is.
    const hint = why.includes('net::ERR_') ? loopbackHint(url) : '';
    throw new BrowserFailure(`Navigation to ${url} failed: ${why}${hint}`, mp.id);
  }
  await call.sleep(slowmoMs);
  return { url, status_code: status, final_url: mp.url };
}

export interface ContentResult {
  url: string;
  title: string;
  content: string;
  content_length: number;
}

/** The page's full HTML as it is now (a reading call: no slowmo), as a string. */
export async function extractContent(mp: ManagedPage, call: Call): Promise<ContentResult> {
  const read = await readPageHtml(mp, call);
  const content = read.content.parse();
  if (typeof content !== 'string') throw new Error('the page HTML read gave no string');
  return { ...read, content };
}

export interface ScreenshotResult {
  screenshot: string;
  full_screenshot: string | null;
  url: string;
}

/**
 * A PNG of the viewport (or with `beyond`, of the whole page), taken straight from the page's
 * session: puppeteer's own screenshot queues every page of the browser behind one lock, so a
 * capture stuck on a hung page would hold the others up.
 */
export async function capturePng(mp: ManagedPage, call: Call, beyond: boolean): Promise<string> {
  const { data } = await mp.cdp(call, (s) =>
    s.send('Page.captureScreenshot', {
      format: 'png',
      fromSurface: true,
      captureBeyondViewport: beyond,
    }),
  );
  return data;
}

/** A clip of the page in CSS pixels from the document's top-left corner. */
export interface PageClip {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A PNG of one region of the page. A region outside the viewport is captured where it is
 * (`captureBeyondViewport`), so nothing scrolls; one inside it is taken as painted.
 */
export async function captureClipPng(
  mp: ManagedPage,
  call: Call,
  clip: PageClip,
  inViewport: boolean,
): Promise<string> {
  const { data } = await mp.cdp(call, (s) =>
    s.send('Page.captureScreenshot', {
      format: 'png',
      fromSurface: true,
      captureBeyondViewport: !inViewport,
      clip: { ...clip, scale: 1 },
    }),
  );
  return data;
}

/**
 * The viewport as PNG, and with `full` the whole page too. The tab is brought to the front
 * first: a headed browser does not paint a tab nobody looks at.
 */
export async function screenshot(
  mp: ManagedPage,
  call: Call,
  full: boolean,
): Promise<ScreenshotResult> {
  await mp.bringToFront(call);
  const shot = await capturePng(mp, call, false);
  const fullShot = full ? await capturePng(mp, call, true) : null;
  return { screenshot: shot, full_screenshot: fullShot, url: mp.url };
}
