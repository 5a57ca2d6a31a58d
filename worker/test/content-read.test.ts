import type { CDPSession } from 'puppeteer-core';
import type { ManagedPage } from '../src/browser/managed-page';
import { extractContent } from '../src/browser/page-actions';
import { createLogger } from '@persona-browser/service-kit';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { InProcessBrowser } from './in-process';
import { startInProcessBrowser } from './in-process';
import { inMainWorld } from './main-world';

/**
 * extract-content reads the page's HTML and its title in one DevTools command: the call that
 * ends with that read answers without a title read or a health probe of its own (each one more
 * round trip to the browser before or beside the reply), and the pool shows the title it read.
 */

let browser: InProcessBrowser;
let site: Fixture;
let mp: ManagedPage;

beforeAll(async () => {
  site = await startFixture();
  browser = await startInProcessBrowser(createLogger({ secrets: [], level: 'error' }));
  mp = await browser.navigator.requirePool().create('p');
  await mp.page.goto(site.url, { waitUntil: 'domcontentloaded' });
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

/** Every DevTools command sent on the page's session while `work` runs, in order. */
async function commandsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const session: CDPSession = mp.session;
  const send = session.send.bind(session);
  const outside: string[] = [];
  const during: string[] = [];
  let running = false;
  const record: typeof send = (method, ...rest) => {
    (running ? during : outside).push(method);
    return send(method, ...rest);
  };
  session.send = record;
  try {
    // Start right after the pool's periodic health probe (every 2 s), so that none falls inside.
    const until = Date.now() + 10_000;
    while (!outside.includes('Page.getNavigationHistory') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    running = true;
    await work();
    // Anything the call set off as it ended (a probe) is sent by now.
    await new Promise((resolve) => setImmediate(resolve));
    running = false;
  } finally {
    session.send = send;
  }
  return during;
}

const read = (endsWithTitle: boolean): Promise<unknown> =>
  mp.run('extract-content', { endsWithTitle }, (call) => extractContent(mp, call));

test('extract-content answers after one DevTools command: no title read or probe after it', async () => {
  // The first read of a document makes the isolated world it runs in.
  await read(true);
  expect(await commandsDuring(() => read(true))).toEqual(['Runtime.evaluate']);
}, 30_000);

test('a call that does not end with the title read still reads the title and probes', async () => {
  await read(false);
  const sent = await commandsDuring(() => read(false));
  expect(sent.filter((m) => m === 'Page.getNavigationHistory').length).toBeGreaterThan(0);
}, 30_000);

test('the pool shows the title extract-content read, a title the page set just before included', async () => {
  await inMainWorld(mp, "document.title = 'Retitled just now'");
  const content = await mp.run('extract-content', { endsWithTitle: true }, (call) =>
    extractContent(mp, call),
  );
  expect(content.title).toBe('Retitled just now');
  expect(content.content).toContain('<title>Retitled just now</title>');
  expect(mp.title).toBe('Retitled just now');
}, 30_000);
