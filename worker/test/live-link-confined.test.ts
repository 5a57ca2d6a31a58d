import type { BrowserContext, Page } from 'puppeteer-core';
import type { KeyInput } from 'puppeteer-core';
import { newTokenId, TokenSigner } from '@persona-browser/service-kit';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { Observer } from '@persona-browser/testkit/observer';
import { pageProblems } from '@persona-browser/testkit/page-problems';
import { VIEWER_CONNECT_MS, viewerLive } from '@persona-browser/testkit/viewer';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * A live-view link limited to page a drives page a only, though the display shows the browser's
 * whole window, its tab strip and the other tabs included. The real worker with its Xvfb, x11vnc
 * and headed Chromium; the person is a second, headless Chromium at the viewer page. Pages a and
 * b record, in the page itself, when they are shown or hidden and the presses and keys they get;
 * the test reads those records through DevTools.
 */

const PERSONA = 'confiner';
const WAIT_MS = 30_000;
/** Where the display shows b's tab: the second of the tab strip (each tab 232 px from x 40). */
const TAB_B = { x: 388, y: 20 };
let w: RunningWorker;
let client: ClientBrowser;
let observer: Observer;
type Body = Record<string, any>;
type Entry = [string, ...unknown[]];

/** A page that records its visibility changes (with the time), presses and keys in `__log`. */
const watcher = (name: string, popup: string): string =>
  'data:text/html,' +
  encodeURIComponent(
    `<!doctype html><html><head><title>${name}</title></head>` +
      `<body style="margin:0;height:100vh;background:#fff"><!--tab-${name}-->${name}` +
      // A sign-in popup, as a page opens one: a tab of its own, in front.
      '<button style="position:fixed;left:0;top:0;width:200px;height:100px" ' +
      `onclick="window.open('${popup}#popup-${name}')">open</button><script>` +
      'const log=window.__log=[["start",document.visibilityState]];' +
      'addEventListener("visibilitychange",()=>log.push([document.visibilityState,Date.now()]));' +
      'addEventListener("mousedown",e=>log.push(["press",e.screenX,e.screenY]),true);' +
      'addEventListener("keydown",e=>log.push(["key",e.key]),true);' +
      '</script></body></html>',
  );

/** What page `name` has recorded so far, read in the page. */
const logOf = (name: string): Promise<Entry[]> => observer.read<Entry[]>(`tab-${name}`, '__log');

/** Waits until page `name` has recorded an entry after the first `from` that `match` accepts. */
async function recorded(name: string, from: number, match: (e: Entry) => boolean): Promise<Entry> {
  const until = Date.now() + WAIT_MS;
  for (;;) {
    const found = (await logOf(name)).slice(from).find(match);
    if (found) return found;
    if (Date.now() > until) throw new Error(`page ${name} recorded no such entry in time`);
    await sleep(100);
  }
}

const signer = new TokenSigner(KEY);

/** A `live` token limited to `pageId`, as the waker or `ask-person` makes them. */
const liveToken = (pageId: string): string =>
  signer.sign({
    id: newTokenId(),
    persona: PERSONA,
    scope: 'live',
    page_id: pageId,
    label: 'test',
    exp: Math.floor(Date.now() / 1000) + 600,
  });

interface Viewer {
  ctx: BrowserContext;
  page: Page;
  /** Clicks the display at screen pixels (x, y), through the viewer's canvas. */
  click(x: number, y: number): Promise<void>;
  /** Presses `key` with `modifiers` held, into the viewer. */
  chord(modifiers: KeyInput[], key: KeyInput): Promise<void>;
}

/** The viewer at `/vnc/#<fragment>`, connected and showing the screen. */
async function openViewer(fragment: string): Promise<Viewer> {
  const ctx = await client.browser.createBrowserContext();
  const page = await ctx.newPage();
  const problems = pageProblems(page);
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${w.url}/vnc/#${fragment}`, { waitUntil: 'load' });
  await viewerLive(page, VIEWER_CONNECT_MS, problems);
  await page.waitForFunction(
    () => {
      const c = document.querySelector<HTMLCanvasElement>('#screen canvas');
      return c?.width === 1920 && c.height === 1080;
    },
    { timeout: WAIT_MS },
  );
  const canvas = await page.$('#screen canvas');
  const box = await canvas!.boundingBox();
  const scale = box!.width / 1920;
  return {
    ctx,
    page,
    click: (x, y) => page.mouse.click(box!.x + x * scale, box!.y + y * scale),
    chord: async (modifiers, key) => {
      for (const m of modifiers) await page.keyboard.down(m);
      await page.keyboard.press(key);
      for (const m of [...modifiers].reverse()) await page.keyboard.up(m);
    },
  };
}

const inControlOf = (page: Page, id: string): Promise<unknown> =>
  page.waitForFunction(
    (text) => document.getElementById('mode')?.textContent === text,
    { timeout: WAIT_MS },
    `You are in control of ${id}`,
  );

/** Waits until the viewer shows a light (a's white) or a dark pixel at screen pixel (x, y). */
const screenShows = (v: Viewer, x: number, y: number, shade: 'light' | 'dark'): Promise<unknown> =>
  v.page.waitForFunction(
    (px: number, py: number, light: boolean) => {
      const c = document.querySelector<HTMLCanvasElement>('#screen canvas')!;
      const [r, g, b] = c.getContext('2d')!.getImageData(px, py, 1, 1).data;
      return r! + g! + b! > 3 * 200 === light;
    },
    { timeout: WAIT_MS, polling: 100 },
    x,
    y,
    shade === 'light',
  );

/** A press in page a at (x, y) of the screen, waited for until a records it there. */
async function clickInA(v: Viewer, x: number, y: number): Promise<void> {
  const from = (await logOf('a')).length;
  await v.click(x, y);
  const [, sx, sy] = await recorded('a', from, (e) => e[0] === 'press');
  expect(Math.abs(Number(sx) - x)).toBeLessThan(5);
  expect(Math.abs(Number(sy) - y)).toBeLessThan(5);
}

/** The browser's tabs, as any DevTools client sees them. */
async function tabCount(): Promise<number> {
  const session = await observer.browserSession();
  try {
    const { targetInfos } = await session.send('Target.getTargets');
    return targetInfos.filter((t) => t.type === 'page').length;
  } finally {
    await session.detach().catch(() => undefined);
  }
}

beforeAll(async () => {
  w = await startWorker({ persona: PERSONA, env: { DEVTOOLS_PORT: '0' } });
  await w.waitInitialized();
  // a first: its tab is the first of the strip, b's the second.
  for (const id of ['a', 'b']) {
    expect(
      (await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } })).status,
    ).toBe(200);
    const nav = await w.call('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: watcher(id, `${w.url}/vnc/`) },
    });
    expect(nav.status).toBe(200);
  }
  observer = await Observer.attach(w);
  client = await launchClientBrowser();
});
afterAll(async () => {
  await observer?.detach();
  await client?.close();
  await w?.stop();
});
afterEach(async () => {
  await w.call('DELETE', '/vnc/control');
});

test('a link limited to page a: b’s tab, Ctrl+Tab, Ctrl+PageDown, Ctrl+2, Ctrl+T and Ctrl+W leave a in front and b untouched, while clicks and keys in a reach a', async () => {
  const v = await openViewer(`token=${encodeURIComponent(liveToken('a'))}`);
  await inControlOf(v.page, 'a');
  const fromA = (await logOf('a')).length;
  const fromB = (await logOf('b')).length;
  await clickInA(v, 960, 600);

  await v.click(TAB_B.x, TAB_B.y);
  await v.chord(['Control'], 'Tab');
  await v.chord(['Control'], 'PageDown');
  await v.chord(['Control'], '2');
  await v.chord(['Control'], 't');
  await v.chord(['Control'], 'w');
  // Input reaches the display in order: once a has this key and press, the browser has had
  // every chord and click before them.
  await v.page.keyboard.press('x');
  await recorded('a', fromA, (e) => e[0] === 'key' && e[1] === 'x');
  await clickInA(v, 700, 800);

  // b was never shown and got nothing; a was never hidden, and got no key of a chord.
  // (b going behind a as the viewer took a may be recorded late: 'hidden' says nothing here.)
  expect((await logOf('b')).slice(fromB).filter((e) => e[0] !== 'hidden')).toEqual([]);
  const inA = (await logOf('a')).slice(fromA);
  expect(inA.filter((e) => e[0] === 'hidden')).toEqual([]);
  const keys = inA.filter((e) => e[0] === 'key' && !['Control', 'Shift'].includes(String(e[1])));
  expect(keys).toEqual([['key', 'x']]);
  // No tab was opened or closed: a and b are the window's tabs, and the pool's.
  expect(await tabCount()).toBe(2);
  const pages = await w.call<Body>('GET', '/api/v1/system/status/pages');
  expect((pages.body.pages as Body[]).map((p) => p.page_id).sort()).toEqual(['a', 'b']);
  await v.ctx.close();
});

test('a tab that comes forward under the person (a page an API client makes meanwhile) goes behind a at once', async () => {
  const v = await openViewer(`token=${encodeURIComponent(liveToken('a'))}`);
  await inControlOf(v.page, 'a');
  const fromA = (await logOf('a')).length;
  const made = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'c' } });
  expect(made.status).toBe(200);
  // The new tab opens in front of a; a is back in front a moment later.
  const [, hiddenAt] = await recorded('a', fromA, (e) => e[0] === 'hidden');
  const [, shownAt] = await recorded('a', fromA, (e) => e[0] === 'visible');
  const hiddenMs = Number(shownAt) - Number(hiddenAt);
  console.log(`page a was hidden for ${hiddenMs} ms behind the new page`);
  expect(hiddenMs).toBeGreaterThanOrEqual(0);
  expect(hiddenMs).toBeLessThan(1000);
  expect(w.logs.some((l) => l.includes('kept the controlled page in front'))).toBe(true);
  await clickInA(v, 960, 600);
  expect((await w.call('DELETE', '/api/v1/ops/c/destroy-page')).status).toBe(200);
  await v.ctx.close();
});

test('a tab that page a opens itself (a sign-in popup) is a’s: it stays, in front', async () => {
  const v = await openViewer(`token=${encodeURIComponent(liveToken('a'))}`);
  await inControlOf(v.page, 'a');
  const logged = w.logs.length;
  // The popup button, at the top left of a's content (where a's viewport starts on screen).
  const top = await observer.read<number>('tab-a', 'outerHeight - innerHeight');
  await screenShows(v, 960, 600, 'light');
  await v.click(100, top + 50);
  const until = Date.now() + WAIT_MS;
  while (!w.logs.slice(logged).some((l) => l.includes('opened a tab of its own'))) {
    if (Date.now() > until) throw new Error('the worker never saw the popup');
    await sleep(100);
  }
  // The person sees it: the viewer page it opened, dark, instead of a's white.
  await screenShows(v, 960, 600, 'dark');
  expect(await tabCount()).toBe(3);
  expect(
    w.logs.slice(logged).filter((l) => /kept the controlled page|closed a tab/.test(l)),
  ).toEqual([]);
  await (await observer.page(`${w.url}/vnc/#popup-a`)).close();
  await v.ctx.close();
});

test('a viewer with the key keeps its freedom: a click on b’s tab brings b forward', async () => {
  const v = await openViewer(`key=${encodeURIComponent(KEY)}`);
  const took = await v.page.evaluate(async () => {
    const r = await fetch('/vnc/control', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ page_id: 'a' }),
    });
    return r.status;
  });
  expect(took).toBe(200);
  await inControlOf(v.page, 'a');
  const fromB = (await logOf('b')).length;
  await v.click(TAB_B.x, TAB_B.y);
  await recorded('b', fromB, (e) => e[0] === 'visible');
  await v.ctx.close();
});
