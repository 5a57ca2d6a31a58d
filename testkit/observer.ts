import fs from 'node:fs';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser, CDPSession, Page } from 'puppeteer-core';
import type { RunningWorker } from './worker';

/**
 * A second client of the worker's own browser, for reading what a page saw (its event log)
 * without going through the API under test. It never closes the worker's browser.
 */
export class Observer {
  private constructor(private readonly browser: Browser) {}

  static async attach(w: RunningWorker): Promise<Observer> {
    const port = fs
      .readFileSync(path.join(w.profileDir, 'DevToolsActivePort'), 'utf8')
      .split('\n')[0];
    const browser = await puppeteer.connect({
      browserURL: `http://127.0.0.1:${port}`,
      defaultViewport: null,
    });
    return new Observer(browser);
  }

  /**
   * The tab whose URL contains `marker`, once this client sees one: it hears of a navigation
   * another client made a moment after that client's call answered.
   */
  async page(marker: string, timeoutMs = 10_000): Promise<Page> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = (await this.browser.pages()).find((p) => p.url().includes(marker));
      if (found) return found;
      if (Date.now() > until) throw new Error(`no tab with ${marker} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A browser-level session of the observer's own (the caller detaches it). */
  browserSession(): Promise<CDPSession> {
    return this.browser.target().createCDPSession();
  }

  async read<T>(marker: string, expression: string): Promise<T> {
    const page = await this.page(marker);
    return (await page.evaluate(expression)) as T;
  }

  /**
   * `expression` in the fixture's /input tab once it shows a document the fixture served after
   * its `served`th (`Fixture.served('/input')` before the navigation; the page carries its number
   * as `window.__served`). A navigation another client made reaches this client's view a moment
   * later: read meanwhile, the old document answers or its context ends under the call.
   */
  async readInputServedAfter<T>(
    served: number,
    expression: string,
    timeoutMs = 15_000,
  ): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        const page = await this.page('/input', 0);
        if (await page.evaluate(`(window.__served ?? 0) > ${served}`))
          return (await page.evaluate(expression)) as T;
      } catch (err) {
        if (!/Execution context was destroyed|no tab with/.test(String(err))) throw err;
      }
      if (Date.now() > until)
        throw new Error(`no /input document served after the ${served}th within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async detach(): Promise<void> {
    await this.browser.disconnect();
  }
}
