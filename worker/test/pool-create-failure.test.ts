import type { Browser } from 'puppeteer-core';
import { createLogger } from '@persona-browser/service-kit';
import type { InProcessBrowser } from './in-process';
import { startInProcessBrowser } from './in-process';

/**
 * A page that cannot be made leaves no tab behind, and never the window without one: Chromium
 * quits when its window's last tab closes, so a failure on the browser's only tab (the blank
 * one the pool keeps) would take the browser down with it.
 */

let browser: InProcessBrowser;

beforeAll(async () => {
  browser = await startInProcessBrowser(createLogger({ secrets: [], level: 'error' }), {
    onPageCreated: (page) => {
      if (page.id.startsWith('broken')) throw new Error('set-up failed on purpose');
    },
  });
});
afterAll(async () => {
  await browser?.close();
});

test('a page whose set-up fails on the window’s only tab is refused, and the browser stays with one blank tab', async () => {
  const nav = browser.navigator;
  const pool = nav.requirePool();
  const pid = nav.browserPid;
  expect(pid).not.toBeNull();
  for (const id of ['broken1', 'broken2']) {
    await expect(pool.create(id)).rejects.toThrow(/could not be created: set-up failed/);
    expect(pool.size).toBe(0);
  }
  // The window kept a tab, the blank one: Chromium quits with its last tab, and it had none to
  // lose.
  const browserOf = (nav as unknown as { browser: Browser | null }).browser;
  expect((await browserOf?.pages())?.map((p) => p.url())).toEqual(['about:blank']);
  expect(nav.browserPid).toBe(pid);
  expect(nav.status().browser_context_active).toBe(true);
  const made = await nav.requirePool().create('fine');
  await made.page.goto('about:blank#fine');
  expect(made.url).toBe('about:blank#fine');
  // The failed pages' tabs and the blank one are gone: the window holds the pool's page alone.
  expect((await made.page.browser().pages()).map((p) => p.url())).toEqual(['about:blank#fine']);
  expect(nav.browserPid).toBe(pid);
});
