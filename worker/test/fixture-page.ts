import { createLogger } from '@persona-browser/service-kit';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { ManagedPage } from '../src/browser/managed-page';
import type { InProcessBrowser } from './in-process';
import { startInProcessBrowser } from './in-process';

/** The fixture site, and an in-process browser (quiet logger) with one pool page, `p`. */
export async function startFixturePage(): Promise<{
  site: Fixture;
  browser: InProcessBrowser;
  mp: ManagedPage;
}> {
  const site = await startFixture();
  const browser = await startInProcessBrowser(createLogger({ secrets: [], level: 'error' }));
  return { site, browser, mp: await browser.navigator.requirePool().create('p') };
}
