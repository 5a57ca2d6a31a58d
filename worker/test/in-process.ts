import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startXvfb } from '@persona-browser/xvfb';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { findBrowserBinary } from '../src/browser/launch';
import { Navigator } from '../src/browser/navigator';
import type { PoolHooks } from '../src/browser/page-pool';
import type { Logger } from '@persona-browser/service-kit';

export interface InProcessBrowser {
  navigator: Navigator;
  close(): Promise<void>;
}

/**
 * The worker's navigator in the test's own process, on a real headed Chromium under its own
 * Xvfb: for tests that drive the browser layer directly (no HTTP in between).
 */
export async function startInProcessBrowser(
  logger: Logger,
  hooks?: PoolHooks,
): Promise<InProcessBrowser> {
  const display: VirtualDisplay = await startXvfb();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-inprocess-'));
  const navigator = new Navigator({
    executablePath: findBrowserBinary(process.env.CHROME_PATH ?? null),
    profileDir: path.join(dir, 'profile'),
    display: display.display,
    slowmoMs: 0,
    logger,
    hooks,
  });
  await navigator.start();
  return {
    navigator,
    close: async () => {
      await navigator.stop();
      await display.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
