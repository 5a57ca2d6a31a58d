import { TimeoutError } from 'puppeteer-core';
import { BrowserFailure, Timeout, errorMessage } from '../errors';
import { about, sleep } from '../util';
import type { ManagedPage } from './managed-page';

export const NAVIGATION_TIMEOUT_MS = 60_000;
export const PRE_NAVIGATION_DELAY_MS = 2_000;

export interface NavigateResult {
  url: string;
  status_code: number | null;
  final_url: string;
}

/**
 * Goes to `url` like a person who pauses before typing an address: about 2 s, then waits for
 * DOM content loaded. A navigation past 60 s is stopped so the page stays usable, and is a 408.
 */
export function navigate(mp: ManagedPage, url: string, slowmoMs: number): Promise<NavigateResult> {
  return mp.run(
    'navigate',
    async () => {
      await sleep(about(PRE_NAVIGATION_DELAY_MS));
      let status: number | null;
      try {
        const response = await mp.page.goto(url, {
          waitUntil: 'domcontentloaded',
          timeout: NAVIGATION_TIMEOUT_MS,
        });
        status = response?.status() ?? null;
      } catch (err) {
        if (err instanceof TimeoutError) {
          await mp.cdp.send('Page.stopLoading').catch(() => undefined);
          throw new Timeout(`Navigation exceeded ${NAVIGATION_TIMEOUT_MS / 1000} s`, mp.id);
        }
        throw new BrowserFailure(`Navigation to ${url} failed: ${errorMessage(err)}`, mp.id);
      }
      await sleep(slowmoMs);
      return { url, status_code: status, final_url: mp.page.url() };
    },
    { loading: true, allowCrashed: true },
  );
}

export interface ContentResult {
  url: string;
  title: string;
  content: string;
  content_length: number;
}

/** The page's full HTML as it is now (a reading call: no slowmo). */
export function extractContent(mp: ManagedPage): Promise<ContentResult> {
  return mp.run('extract-content', async () => {
    const [content, title] = await Promise.all([mp.page.content(), mp.page.title()]);
    mp.title = title;
    return { url: mp.page.url(), title, content, content_length: content.length };
  });
}

export interface ScreenshotResult {
  screenshot: string;
  full_screenshot: string | null;
  url: string;
}

/** The viewport as PNG, and with `full` the whole page too, without changing the viewport. */
export function screenshot(mp: ManagedPage, full: boolean): Promise<ScreenshotResult> {
  return mp.run('screenshot', async () => {
    const shot = await mp.page.screenshot({ encoding: 'base64', type: 'png' });
    const fullShot = full
      ? await mp.page.screenshot({ encoding: 'base64', type: 'png', fullPage: true })
      : null;
    return { screenshot: shot, full_screenshot: fullShot, url: mp.page.url() };
  });
}
