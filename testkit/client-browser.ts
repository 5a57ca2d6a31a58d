import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import type { Browser } from 'puppeteer-core';

export interface ClientBrowser {
  browser: Browser;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * A separate headless Chromium playing the person at our web pages: the worker's panel, docs and
 * live view, the fleet panel (the waker's and the supervisor's tests use it too).
 */
export async function launchClientBrowser(): Promise<ClientBrowser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-client-'));
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROME_PATH || '/usr/bin/chromium',
    headless: true,
    userDataDir,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
