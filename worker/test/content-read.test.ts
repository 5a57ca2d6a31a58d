import type { CDPSession } from 'puppeteer-core';
import type { ManagedPage } from '../src/browser/managed-page';
import { extractContent } from '../src/browser/page-actions';
import { readPageHtml } from '../src/browser/page-html';
import type { WireReply } from '../src/devtools/wire-commands';
import { evaluatedStringPair } from '../src/devtools/wire-commands';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { AWKWARD_TITLE } from '@persona-browser/testkit/fixture';
import type { InProcessBrowser } from './in-process';
import { startFixturePage } from './fixture-page';
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
  ({ site, browser, mp } = await startFixturePage());
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
  // The commands sent outside the work that have not been answered yet.
  const unanswered = new Set<Promise<unknown>>();
  const track = <T extends Promise<unknown> | null>(sent: T): T => {
    if (running || sent === null) return sent;
    unanswered.add(sent);
    const done = (): boolean => unanswered.delete(sent);
    sent.then(done, done);
    return sent;
  };
  const record: typeof send = (method, ...rest) => {
    (running ? during : outside).push(method);
    return track(send(method, ...rest));
  };
  session.send = record;
  mp.wire = (call, method, params) => {
    (running ? during : outside).push(method);
    return track(wire(call, method, params));
  };
  try {
    // Start right after the pool's periodic health probe (every 2 s) has been answered, so that
    // none falls inside.
    const end = Date.now() + 10_000;
    const waiting = (what: string): void => {
      if (Date.now() > end) throw new Error(`timed out after 10 s waiting for ${what}`);
    };
    while (!outside.includes('Page.getNavigationHistory')) {
      waiting('the pool’s health probe');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    while (unanswered.size > 0) {
      waiting('the answers to the health probe’s commands');
      await Promise.race([
        Promise.allSettled([...unanswered]),
        new Promise((resolve) => setTimeout(resolve, 100)),
      ]);
      // A command sent once an answer came is in the set by the next turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
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

describe('a large document read again', () => {
  /** The methods of the unparsed commands `work` sent, and what it returned. */
  async function wireMethods<T>(work: () => Promise<T>): Promise<{ methods: string[]; out: T }> {
    const wire = mp.wire.bind(mp);
    const methods: string[] = [];
    mp.wire = (call, method, params) => {
      methods.push(method);
      return wire(call, method, params);
    };
    try {
      return { methods, out: await work() };
    } finally {
      mp.wire = wire;
    }
  }
  const readHtml = (): Promise<{ title: string; html: unknown; length: number }> =>
    mp
      .run('extract-content', {}, (call) => readPageHtml(mp, call))
      .then((r) => ({ title: r.title, html: r.content.parse(), length: r.content_length }));
  /** The page as puppeteer's content() and title() serialise it, read in the main world. */
  const reference = async (): Promise<{ title: string; html: unknown; length: number }> => {
    const [title, html] = await inMainWorld<[string, string]>(
      mp,
      `(() => { let s = ''; for (const n of document.childNodes) s += n === document.documentElement ? n.outerHTML : new XMLSerializer().serializeToString(n); return [document.title, s]; })()`,
    );
    return { title, html, length: html.length };
  };
  /** Reads until a read goes by the document's node (it is learnt after a read by script). */
  async function readByNode(): Promise<{ title: string; html: unknown; length: number }> {
    const until = Date.now() + 10_000;
    for (;;) {
      const { methods, out } = await wireMethods(readHtml);
      if (methods.includes('DOM.getOuterHTML')) {
        expect(methods).toEqual(['DOM.getOuterHTML']);
        return out;
      }
      if (Date.now() > until) throw new Error(`reads never went by the node: ${methods.join()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('is serialised by the browser from its node: the very HTML and title the script read gives, every change since included', async () => {
    await mp.page.goto(`${site.url}/large?tag=first`, { waitUntil: 'load' });
    const { methods, out: byScript } = await wireMethods(readHtml);
    expect(methods).toEqual(['Runtime.evaluate']);
    expect(byScript).toEqual(await reference());
    expect(byScript.html).toContain('<!-- before the root --><html>');
    expect(byScript.html).toContain('\u0001\u001f\u007f');
    expect(byScript.length).toBeGreaterThan(16_384);
    expect(await readByNode()).toEqual(byScript);
    await inMainWorld(
      mp,
      "document.title = 'Changed ✓'; document.body.insertAdjacentHTML('beforeend', '<p id=added>added ✓</p>')",
    );
    const changed = await readByNode();
    expect(changed.title).toBe('Changed ✓');
    expect(changed.html).toContain('<p id="added">added ✓</p>');
    expect(changed).toEqual(await reference());
    expect(mp.title).toBe('Changed ✓');
  }, 60_000);

  test('a new document is read as itself: another page, the same page reloaded, a page restored from history', async () => {
    await mp.page.goto(`${site.url}/large?tag=one`, { waitUntil: 'load' });
    await readHtml();
    await readByNode();
    await inMainWorld(mp, "document.body.insertAdjacentHTML('beforeend', '<p id=mark>mark</p>')");
    expect((await readByNode()).html).toContain('id="mark"');
    // Another document: the one left may live on in the back-forward cache, node and all.
    await mp.page.goto(`${site.url}/large?tag=two`, { waitUntil: 'load' });
    const two = await readHtml();
    expect(two.html).toContain('<h1 id="tag">two</h1>');
    expect(two.html).not.toContain('id="mark"');
    expect(two).toEqual(await reference());
    // Back to the first: the very document restored, its mark still in it.
    await mp.page.goBack({ waitUntil: 'load' });
    const back = await readHtml();
    expect(back.html).toContain('<h1 id="tag">one</h1>');
    expect(back).toEqual(await reference());
    // The same URL loaded again: a new document without the mark.
    expect((await readByNode()).html).toContain('id="mark"');
    await mp.page.reload({ waitUntil: 'load' });
    const reloaded = await readHtml();
    expect(reloaded.html).toContain('<h1 id="tag">one</h1>');
    expect(reloaded.html).not.toContain('id="mark"');
    expect(reloaded).toEqual(await reference());
  }, 60_000);
});
