import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Frame, Page } from 'puppeteer-core';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';
import { RECORDER, seen } from '@persona-browser/testkit/recorder';
import { until } from '@persona-browser/testkit/waker';
import { shown } from '@persona-browser/testkit/on-screen';
import type { PageProblems } from '@persona-browser/testkit/page-problems';
import { pageProblems } from '@persona-browser/testkit/page-problems';
import { VIEWER_CONNECT_MS, viewerLive } from '@persona-browser/testkit/viewer';
import { openWithKey } from '@persona-browser/testkit/panel-key';

/**
 * The live view as a person uses it: the viewer page (noVNC) and the control panel in a second,
 * headless browser against the real worker, its Xvfb, x11vnc and headed Chromium.
 */

const WAIT_MS = 30_000;
let w: RunningWorker;
let client: ClientBrowser;
type Body = Record<string, any>;

/** Every URL the client browsers asked for, and their script errors. */
const urls: string[] = [];
const scriptErrors: string[] = [];

async function freshRecorder(): Promise<void> {
  await w.call('DELETE', '/vnc/control');
  const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
  expect(nav.status).toBe(200);
}

async function newContext(): Promise<{ ctx: BrowserContext; page: Page }> {
  const ctx = await client.browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('request', (r) => urls.push(r.url()));
  page.on('pageerror', (err) => scriptErrors.push(String(err)));
  problemsOf.set(page, pageProblems(page));
  return { ctx, page };
}

/** The noVNC canvas's backing size, and how many distinct colours a sample of it holds. */
function canvasInfo(frame: Page | Frame): Promise<{ w: number; h: number; colours: number }> {
  return frame.$eval('#screen canvas', (c) => {
    const canvas = c;
    const ctx = canvas.getContext('2d') as CanvasRenderingContext2D;
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const colours = new Set<number>();
    for (let i = 0; i < data.length; i += 4 * 997) {
      colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    }
    return { w: canvas.width, h: canvas.height, colours: colours.size };
  });
}

/** What went wrong for each viewer page, named when it is not live in time. */
const problemsOf = new WeakMap<Page, PageProblems>();
const waitLive = (frame: Page | Frame): Promise<void> => {
  const page = 'page' in frame ? frame.page() : frame;
  return viewerLive(frame, VIEWER_CONNECT_MS, problemsOf.get(page));
};

beforeAll(async () => {
  w = await startWorker({ persona: 'watcher', env: { LIVE_CONTROL_GRACE_SECONDS: '2' } });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'rec' } });
  await freshRecorder();
  client = await launchClientBrowser();
});
afterAll(async () => {
  await client?.close();
  await w?.stop();
});

/**
 * After each test, on its own: the key never reached the server in a URL (only the deliberate
 * ?key= attempt carries it), in the worker's logs or in the request log, and no script failed.
 * What goes on the wire is the URL without its fragment (puppeteer reports it whole).
 */
let urlsChecked = 0;
afterEach(() => {
  const sent = urls.slice(urlsChecked).map((u) => u.split('#')[0] ?? u);
  urlsChecked = urls.length;
  const withKey = sent.filter((u) => u.includes(KEY) || u.includes(encodeURIComponent(KEY)));
  expect(withKey.filter((u) => u !== `${w.url}/vnc/?key=${encodeURIComponent(KEY)}`)).toEqual([]);
  expect(w.logs.filter((l) => l.includes(KEY))).toEqual([]);
  const requests = path.join(w.dataDir, 'requests');
  const files = fs.existsSync(requests) ? fs.readdirSync(requests) : [];
  for (const f of files) expect(fs.readFileSync(path.join(requests, f), 'utf8')).not.toContain(KEY);
  expect(scriptErrors.splice(0)).toEqual([]);
});

test('/vnc/#key=… connects, strips the key from the address and keeps only an HttpOnly cookie', async () => {
  const { ctx, page } = await newContext();
  await page.goto(`${w.url}/vnc/#key=${encodeURIComponent(KEY)}`, { waitUntil: 'load' });
  await waitLive(page);
  // Connected with the key from the address: nothing asks for one.
  expect(await shown(page, '#key-form')).toBe(false);
  expect(page.url()).toBe(`${w.url}/vnc/`);
  expect(await page.evaluate(() => document.cookie)).toBe('');
  const cookies = await ctx.cookies();
  expect(cookies).toHaveLength(1);
  expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/vnc' });
  expect(cookies[0]!.value).not.toContain(KEY);
  // The screen arrives: 1920×1080 and not a blank canvas.
  await page.waitForFunction(
    () => {
      const c = document.querySelector<HTMLCanvasElement>('#screen canvas');
      return c !== null && c.width === 1920 && c.height === 1080;
    },
    { timeout: WAIT_MS },
  );
  const info = await (async () => {
    for (let i = 0; i < 50; i++) {
      const v = await canvasInfo(page);
      if (v.colours > 3) return v;
      await sleep(200);
    }
    return canvasInfo(page);
  })();
  expect(info).toMatchObject({ w: 1920, h: 1080 });
  expect(info.colours).toBeGreaterThan(3);
  expect(await page.$eval('#mode', (e) => e.textContent)).toBe('View only');
  // The viewer's noVNC came from the worker itself.
  expect(urls.some((u) => u.startsWith(w.url) && u.includes('/vnc/novnc/core/rfb.js'))).toBe(true);
  await ctx.close();
});

test('a ?key= in the address is not accepted as a key: it is stripped and the viewer asks for one', async () => {
  const { ctx, page } = await newContext();
  const before = urls.length;
  await page.goto(`${w.url}/vnc/?key=${encodeURIComponent(KEY)}`, { waitUntil: 'load' });
  await page.waitForSelector('#key-form:not([hidden])', { timeout: WAIT_MS });
  // The address as typed went out once; the stripped one asks again without it.
  expect(urls.slice(before)).toContain(`${w.url}/vnc/?key=${encodeURIComponent(KEY)}`);
  expect(page.url()).toBe(`${w.url}/vnc/`);
  expect(await page.$eval('#message', (e) => e.textContent)).toMatch(/#key=/);
  expect(await ctx.cookies()).toEqual([]);
  expect(await shown(page, '#key-form')).toBe(true);
  // Typing the key in connects, and the form is gone from the screen.
  await page.type('#key-input', KEY);
  await page.click('#key-form button[type=submit]');
  await waitLive(page);
  expect(await shown(page, '#key-form')).toBe(false);
  expect(await shown(page, '#screen canvas')).toBe(true);
  await ctx.close();
});

test('the viewer watches read-only, and drives the page after "Take control"; "Hand back" ends it', async () => {
  await freshRecorder();
  const { ctx, page } = await newContext();
  await page.goto(`${w.url}/vnc/#key=${encodeURIComponent(KEY)}`, { waitUntil: 'load' });
  await waitLive(page);
  await page.waitForFunction(
    () =>
      Array.from(document.querySelectorAll('#page-select option')).some(
        (o) => (o as HTMLOptionElement).value === 'rec',
      ),
    { timeout: WAIT_MS },
  );
  const canvas = (await page.$('#screen canvas'))!;
  const box = (await canvas.boundingBox())!;
  const centre = { x: box.x + box.width / 2, y: box.y + box.height / 2 };

  // A person clicking into the view while only watching: nothing reaches the page. The click
  // is off centre, so that it would tell itself apart from the click in control below, which
  // it would reach the page before.
  await page.mouse.click(box.x + box.width / 4, box.y + box.height / 4);
  expect(await seen(w, 'rec')).toEqual([]);

  await page.select('#page-select', 'rec');
  await page.click('#take-btn');
  await page.waitForFunction(
    () => document.getElementById('mode')?.textContent === 'You are in control of rec',
    { timeout: WAIT_MS },
  );
  const api = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
  expect(api.status).toBe(423);

  await page.mouse.click(centre.x, centre.y);
  const events = await until(
    async () => {
      const now = await seen(w, 'rec');
      return now.some((e) => Math.abs((e[1] as number) - 960) < 40) ? now : null;
    },
    WAIT_MS,
    'the click made in control to reach the page',
  );
  // Only it: the click made while watching never came.
  expect(events).toHaveLength(1);
  const [kind, x, y, trusted] = events[0] as [string, number, number, boolean];
  expect(kind).toBe('click');
  expect(trusted).toBe(true);
  // The middle of the view is the middle of the 1920×1080 screen.
  expect(Math.abs(x - 960)).toBeLessThan(40);
  expect(Math.abs(y - 540)).toBeLessThan(40);

  await page.click('#handback-btn');
  await page.waitForFunction(() => document.getElementById('mode')?.textContent === 'View only', {
    timeout: WAIT_MS,
  });
  const again = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
  expect(again.status).toBe(200);
  await ctx.close();
});

test('closing the viewer tab that holds control hands it back after the grace', async () => {
  await freshRecorder();
  const { ctx, page } = await newContext();
  await page.goto(`${w.url}/vnc/#key=${encodeURIComponent(KEY)}`, { waitUntil: 'load' });
  await waitLive(page);
  const r = await page.evaluate(async () => {
    const res = await fetch('/vnc/control', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ page_id: 'rec' }),
    });
    return res.status;
  });
  expect(r).toBe(200);
  expect((await w.call<Body>('GET', '/vnc/control')).body).toMatchObject({ controlled: true });
  await page.close();
  let state: Body = {};
  for (let i = 0; i < 100; i++) {
    state = (await w.call<Body>('GET', '/vnc/control')).body;
    if (!state.controlled) break;
    await sleep(200);
  }
  expect(state).toMatchObject({ controlled: false, page_id: null });
  expect(
    (await w.call('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } })).status,
  ).toBe(200);
  await ctx.close();
});

test('the panel shows the live view beside the pool, with "Take control" per page and "Hand back"', async () => {
  await freshRecorder();
  const { ctx, page } = await newContext();
  await page.setViewport({ width: 1600, height: 1000 });
  await openWithKey(page, `${w.url}/`, KEY);
  await page.waitForSelector('#live-frame:not([hidden])', { timeout: WAIT_MS });
  const frame = (await (await page.$('#live-frame'))!.contentFrame())!;
  await waitLive(frame);
  // The panel's key opened the session: the embedded view asks for nothing.
  expect(await shown(frame, '#key-form')).toBe(false);
  // Beside the pool, not under it.
  const pool = (await (await page.$('#pool-table'))!.boundingBox())!;
  const live = (await (await page.$('#live-frame'))!.boundingBox())!;
  expect(live.x).toBeGreaterThan(pool.x + pool.width - 1);
  expect(Math.abs(live.y - pool.y)).toBeLessThan(300);

  // The pool table is drawn again as the pages change: the click finds the button anew then.
  await page
    .locator('#pool-body button[data-take="rec"]:not([disabled])')
    .setTimeout(WAIT_MS)
    .click();
  await page.waitForFunction(
    () =>
      document
        .getElementById('live-status')
        ?.textContent?.startsWith('You are in control of page rec'),
    { timeout: WAIT_MS },
  );
  // The embedded viewer (same session cookie) is the one in control.
  await frame.waitForFunction(
    () => document.getElementById('mode')?.textContent === 'You are in control of rec',
    { timeout: WAIT_MS },
  );
  expect(
    (await w.call('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } })).status,
  ).toBe(423);
  await page.click('#handback-btn');
  await page.waitForFunction(
    () => document.getElementById('live-status')?.textContent?.startsWith('Watching'),
    { timeout: WAIT_MS },
  );
  expect(
    (await w.call('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } })).status,
  ).toBe(200);
  await ctx.close();
});
