import type { CDPSession } from 'puppeteer-core';
import type { ManagedPage } from '../src/browser/managed-page';
import { extractContent } from '../src/browser/page-actions';
import { readPageHtml } from '../src/browser/page-html';
import type { WireReply } from '../src/browser/cdp/wire-commands';
import { evaluatedStringPair } from '../src/browser/cdp/wire-commands';
import { createLogger } from '@persona-browser/service-kit';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { AWKWARD_TITLE, startFixture } from '@persona-browser/testkit/fixture';
import type { InProcessBrowser } from './in-process';
import { startInProcessBrowser } from './in-process';
import { inMainWorld } from './main-world';

/**
 * extract-content reads the page's HTML and its title in one DevTools command: the call that
 * ends with that read answers without a title read or a health probe of its own (each one more
 * round trip to the browser before or beside the reply), and the pool shows the title it read.
 * The HTML leaves as the JSON text Chromium wrote, and that text stands for the same string a
 * parsed read gives, however awkward its characters.
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

/**
 * Every DevTools command sent on the page's session while `work` runs, in order: through
 * puppeteer's session and through the side channel whose replies stay unparsed.
 */
async function commandsDuring(work: () => Promise<unknown>): Promise<string[]> {
  const session: CDPSession = mp.session;
  const send = session.send.bind(session);
  const wire = mp.wire.bind(mp);
  const outside: string[] = [];
  const during: string[] = [];
  let running = false;
  const record: typeof send = (method, ...rest) => {
    (running ? during : outside).push(method);
    return send(method, ...rest);
  };
  session.send = record;
  mp.wire = (call, method, params) => {
    (running ? during : outside).push(method);
    return wire(call, method, params);
  };
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
    mp.wire = wire;
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

test('the HTML goes out as the text Chromium wrote, and stands for the very string the page serialises', async () => {
  await mp.page.goto(`${site.url}/awkward`, { waitUntil: 'load' });
  const wire = mp.wire.bind(mp);
  const replies: WireReply[] = [];
  mp.wire = (call, method, params) => {
    const sent = wire(call, method, params);
    void sent?.then((reply) => replies.push(reply));
    return sent;
  };
  let spliced;
  try {
    spliced = await mp.run('extract-content', {}, (call) => readPageHtml(mp, call));
  } finally {
    mp.wire = wire;
  }
  // Chromium's reply had the shape the splice reads: the HTML was never parsed on its way.
  expect(replies).toHaveLength(1);
  expect(evaluatedStringPair(replies[0] as WireReply)).not.toBeNull();
  expect(spliced.content.json.every((byte) => byte < 0x80)).toBe(true);
  // The same read through puppeteer's session, parsed as any reply: the reference.
  mp.wire = () => null;
  let parsed;
  try {
    parsed = await mp.run('extract-content', {}, (call) => readPageHtml(mp, call));
  } finally {
    mp.wire = wire;
  }
  const html = parsed.content.parse();
  expect(typeof html).toBe('string');
  expect(spliced.content.parse()).toBe(html);
  expect(spliced.content_length).toBe((html as string).length);
  expect(spliced.title).toBe(AWKWARD_TITLE);
  expect(parsed.title).toBe(AWKWARD_TITLE);
  expect(html).toContain('\u0001\u001f\u007f');
}, 30_000);
