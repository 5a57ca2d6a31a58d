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

  /** The tab whose URL contains `marker`. */
  async page(marker: string): Promise<Page> {
    const found = (await this.browser.pages()).find((p) => p.url().includes(marker));
    if (!found) throw new Error(`no tab with ${marker}`);
    return found;
  }

  /** A browser-level session of the observer's own (the caller detaches it). */
  browserSession(): Promise<CDPSession> {
    return this.browser.target().createCDPSession();
  }

  async read<T>(marker: string, expression: string): Promise<T> {
    const page = await this.page(marker);
    return (await page.evaluate(expression)) as T;
  }

  async detach(): Promise<void> {
    await this.browser.disconnect();
  }
}
