import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'puppeteer-core';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { startXvfb } from '@persona-browser/xvfb';
import type { LaunchOptions } from '../src/browser/launch';
import { findBrowserBinary, launchBrowser } from '../src/browser/launch';

/** A display of its own and a fresh profile folder for `work`; both gone after it, whatever it did. */
export async function withDisplayAndProfile<T>(
  prefix: string,
  work: (display: VirtualDisplay, profileDir: string) => Promise<T>,
): Promise<T> {
  const display = await startXvfb();
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    return await work(display, profileDir);
  } finally {
    await display.stop();
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
}

/** The worker's browser launch (CHROME_PATH or the installed one) on such a display and profile. */
export function withBenchBrowser<T>(
  prefix: string,
  options: Omit<LaunchOptions, 'executablePath' | 'profileDir' | 'display'>,
  work: (browser: Browser) => Promise<T>,
): Promise<T> {
  return withDisplayAndProfile(prefix, async (display, profileDir) => {
    const browser = await launchBrowser({
      ...options,
      executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
      profileDir,
      display: display.display,
    });
    try {
      return await work(browser);
    } finally {
      await browser.close().catch(() => undefined);
    }
  });
}
