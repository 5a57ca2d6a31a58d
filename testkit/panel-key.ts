import type { Page } from 'puppeteer-core';
import { pageProblems } from './page-problems';

/**
 * Opens a panel at `url` in `page` until it shows its key card. The card is drawn by the panel's
 * module, which may come after the page's load event (and after a load again, when a module
 * failed on the way): the card is awaited, and its absence named with what the page showed and
 * what failed.
 */
export async function openKeyCard(page: Page, url: string, timeoutMs = 30_000): Promise<void> {
  const problems = pageProblems(page);
  await page.goto(url, { waitUntil: 'load' });
  await page
    .waitForSelector('#key-input', { visible: true, timeout: timeoutMs })
    .catch(async (err: unknown) => {
      const shown = await page.evaluate(() => document.body?.innerText ?? '').catch(String);
      throw new Error(
        `the panel at ${url} showed no key card (${String(err)}); ` +
          `it showed "${shown.slice(0, 300)}"; on the way: ${problems.lines().join('; ') || 'nothing failed'}`,
      );
    });
}

/** Enters `key` in the key card a panel shows, as a person does. */
export async function enterKey(page: Page, key: string): Promise<void> {
  await page.type('#key-input', key);
  await page.click('#key-save');
}

/** Opens a panel at `url` in `page` and enters `key` as a person does. */
export async function openWithKey(
  page: Page,
  url: string,
  key: string,
  timeoutMs = 30_000,
): Promise<void> {
  await openKeyCard(page, url, timeoutMs);
  await enterKey(page, key);
}
