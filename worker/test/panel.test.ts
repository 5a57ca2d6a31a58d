import type { Browser, HTTPRequest, Page } from 'puppeteer-core';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { shownTexts } from '@persona-browser/testkit/on-screen';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * The control panel at `/`, driven like a user would with a second (headless) browser against
 * the real worker: what the user sees, cross-checked through the API.
 */

const WAIT_MS = 20_000;
const NAV_WAIT_MS = 30_000;

let w: RunningWorker;
let fx: Fixture;
let browser: Browser | undefined;
let page: Page;
let client: ClientBrowser | undefined;

interface Seen {
  url: string;
  authorization: string | undefined;
}
const requests: Seen[] = [];
const scriptErrors: string[] = [];
const dialogs: string[] = [];
/**
 * Screenshot requests of the panel's document asked and not yet ended. A request of a document
 * the panel has left may end with no event at all: the set is emptied when the panel loads.
 */
const shotsInFlight = new Set<HTTPRequest>();
let maxShotsInFlight = 0;
let shotsDone = 0;

const isShot = (r: HTTPRequest): boolean => /\/api\/v1\/ops\/[^/]+\/screenshot/.test(r.url());
const shotEnded = (r: HTTPRequest): void => {
  if (!isShot(r)) return;
  shotsInFlight.delete(r);
  shotsDone += 1;
};

beforeAll(async () => {
  [w, fx] = await Promise.all([
    startWorker({ persona: 'panelist', env: { TZ: 'Etc/UTC' } }),
    startFixture(),
  ]);
  await w.waitInitialized();
  client = await launchClientBrowser();
  browser = client.browser;
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on('request', (r) => {
    requests.push({ url: r.url(), authorization: r.headers().authorization });
    if (isShot(r)) {
      shotsInFlight.add(r);
      maxShotsInFlight = Math.max(maxShotsInFlight, shotsInFlight.size);
    }
  });
  page.on('framenavigated', (f) => {
    if (f === page.mainFrame()) shotsInFlight.clear();
  });
  page.on('requestfinished', shotEnded);
  page.on('requestfailed', shotEnded);
  page.on('pageerror', (err) => scriptErrors.push(String(err)));
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.accept();
  });
});

afterAll(async () => {
  await client?.close();
  await Promise.all([w?.stop(), fx?.close()]);
});

/**
 * Each test, on its own: the panel's browser asked only the loopback, and no script failed.
 * Checked after every test (not by a last test reading all the others), so any test run alone
 * is checked too, and a failure names the test during which it happened.
 */
let requestsChecked = 0;
afterEach(() => {
  const fresh = requests.slice(requestsChecked);
  requestsChecked = requests.length;
  expect(offLoopback(fresh)).toEqual([]);
  expect(scriptErrors.splice(0)).toEqual([]);
});

/** Addresses other than the loopback among what the panel's browser asked for. */
function offLoopback(seen: readonly Seen[] = requests): string[] {
  return seen
    .map((r) => r.url)
    .filter((u) => {
      const url = new URL(u);
      if (url.protocol === 'data:' || url.protocol === 'blob:') return false;
      return !['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
    });
}

/** Polls a condition of the test process itself (request counters) until it holds. */
async function until(what: string, cond: () => boolean, timeoutMs = WAIT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the messages area shows `text`. */
async function waitMessage(text: string): Promise<void> {
  await page.waitForFunction(
    (t: string) => document.getElementById('messages')!.textContent.includes(t),
    { timeout: WAIT_MS },
    text,
  );
}

/** The row of a page in the panel's list as the user reads it, or null. */
function rowOf(id: string): Promise<{ state: string; title: string; url: string } | null> {
  return page.evaluate((pid: string) => {
    const tr = Array.from(document.querySelectorAll<HTMLTableRowElement>('#pool-body tr')).find(
      (r) => r.dataset.pageId === pid,
    );
    if (!tr) return null;
    const cells = tr.querySelectorAll('td');
    return {
      state: cells[1]!.textContent.trim(),
      title: cells[2]!.textContent,
      url: cells[3]!.textContent,
    };
  }, id);
}

async function waitRow(id: string, field: 'state' | 'title' | 'url', value: string, ms = WAIT_MS) {
  await page.waitForFunction(
    (pid: string, f: number, v: string) => {
      const tr = Array.from(document.querySelectorAll<HTMLTableRowElement>('#pool-body tr')).find(
        (r) => r.dataset.pageId === pid,
      );
      return tr?.querySelectorAll('td')[f]?.textContent?.trim() === v;
    },
    { timeout: ms },
    id,
    { state: 1, title: 2, url: 3 }[field],
    value,
  );
}

async function typeInto(selector: string, value: string): Promise<void> {
  await page.click(selector, { count: 3 });
  await page.keyboard.press('Backspace');
  await page.type(selector, value);
}

const visible = (selector: string): Promise<boolean> =>
  page.$eval(selector, (e) => !(e as HTMLElement).hidden);
const disabled = (selector: string): Promise<boolean> =>
  page.$eval(selector, (e) => (e as HTMLButtonElement).disabled);

interface PoolBody {
  pages: { page_id: string; url: string; title: string }[];
}

/** Each test starts from an empty pool of a running browser, whatever an earlier one left. */
beforeEach(async () => {
  const status = await w.call<{ initialized: boolean }>('GET', '/api/v1/system/status');
  if (!status.body.initialized) await w.call('GET', '/api/v1/system/start');
  const pool = await w.call<PoolBody>('GET', '/api/v1/system/status/pages', { auth: false });
  for (const p of pool.body.pages) {
    await w.call('DELETE', `/api/v1/ops/${encodeURIComponent(p.page_id)}/destroy-page`);
  }
});

/** A page created through the API, for a test about something else than creating it. */
async function createPage(id: string): Promise<void> {
  const r = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
  expect(r.status).toBe(200);
}

/**
 * The panel freshly loaded, with the key the browser remembers (the key card keeps it in the
 * origin's localStorage) set to `key`, or none. The storage is set from another document of
 * the worker's origin first, so the panel never runs with what an earlier test left there.
 */
async function openPanel(key: string | null): Promise<void> {
  await page.goto(`${w.url}/api/v1/system/ping`, { waitUntil: 'load' });
  await page.evaluate((k: string | null) => {
    if (k === null) localStorage.clear();
    else localStorage.setItem('persona-browser.api-key', k);
  }, key);
  await page.goto(`${w.url}/`, { waitUntil: 'load' });
  await page.waitForSelector(
    key === null ? '#key-form:not([hidden])' : '#key-saved:not([hidden])',
    {
      timeout: WAIT_MS,
    },
  );
  await page.waitForFunction(
    () => document.getElementById('nav-summary')!.textContent === 'Running',
    { timeout: WAIT_MS },
  );
}

/** The panel with the key saved and page `id` chosen in its list (clicked, as a person does). */
async function openPanelOn(id: string): Promise<void> {
  await openPanel(KEY);
  await page.waitForFunction(
    (pid: string) =>
      Array.from(document.querySelectorAll<HTMLTableRowElement>('#pool-body tr')).some(
        (r) => r.dataset.pageId === pid,
      ),
    { timeout: WAIT_MS },
    id,
  );
  await page.evaluate((pid: string) => {
    Array.from(document.querySelectorAll<HTMLTableRowElement>('#pool-body tr'))
      .find((r) => r.dataset.pageId === pid)!
      .click();
  }, id);
  await page.waitForFunction(
    (pid: string) => document.getElementById('chosen-id')!.textContent === pid,
    { timeout: WAIT_MS },
    id,
  );
}

test('loads from the worker alone, shows the running browser and links to the API docs', async () => {
  const from = requests.length;
  await openPanel(null);
  await page.waitForFunction(
    () =>
      document.getElementById('nav-summary')!.textContent === 'Running' &&
      document.getElementById('pool-summary')!.textContent.startsWith('0 of 5 pages'),
    { timeout: WAIT_MS },
  );
  expect(await visible('#pool-empty')).toBe(true);
  // A persona on a UTC server with no BROWSER_TIMEZONE of its own: the panel says so.
  expect(await visible('#nav-warnings')).toBe(true);
  const warning = await page.$eval('#nav-warnings', (e) => (e as HTMLElement).innerText);
  expect(warning).toContain('time zone UTC');
  expect(warning).toContain('Set BROWSER_TIMEZONE');
  // No key yet: the panel asks for it and the controls that need it are off.
  expect(await visible('#key-form')).toBe(true);
  expect(await visible('#key-saved')).toBe(false);
  expect(await disabled('#create-btn')).toBe(true);

  const links = await page.$$eval('a', (as) => as.map((a) => a.getAttribute('href')));
  expect(links).toEqual(expect.arrayContaining(['/docs', '/redoc']));
  for (const href of ['/docs', '/redoc']) {
    expect((await w.call('GET', href, { auth: false })).status).toBe(200);
  }

  const urls = requests.slice(from).map((r) => r.url);
  expect(urls).toEqual(expect.arrayContaining([`${w.url}/panel.js`, `${w.url}/panel.css`]));
  expect(urls.some((u) => u.endsWith('/api/v1/system/status/pages'))).toBe(true);
  expect(offLoopback(requests.slice(from))).toEqual([]);
});

test('a wrong key is answered "Invalid API key" and is not kept', async () => {
  await openPanel(null);
  const from = requests.length;
  await typeInto('#key-input', 'not-the-key');
  await page.click('#key-save');
  await waitMessage('Invalid API key');
  await page.waitForSelector('#key-form:not([hidden])', { timeout: WAIT_MS });
  expect(await shownTexts(page, '.msg-error .msg-text')).toEqual(
    expect.arrayContaining([expect.stringContaining('Invalid API key')]),
  );
  expect(await disabled('#create-btn')).toBe(true);
  const sent = requests.slice(from).filter((r) => r.authorization !== undefined);
  expect(sent.length).toBeGreaterThan(0);
  expect(sent.every((r) => r.authorization === 'Bearer not-the-key')).toBe(true);
  // Nothing of the wrong key survives a reload.
  await page.reload({ waitUntil: 'load' });
  expect(await visible('#key-form')).toBe(true);
});

test('the right key is accepted, sent as a bearer token and remembered across reloads', async () => {
  // The person is on the page where a wrong key was just refused.
  await openPanel(null);
  await typeInto('#key-input', 'not-the-key');
  await page.click('#key-save');
  await waitMessage('Invalid API key');
  const before = requests.length;
  await typeInto('#key-input', KEY);
  await page.click('#key-save');
  await waitMessage('API key accepted');
  // The refusals are over: no red notice stays under a working panel.
  expect(await shownTexts(page, '.msg-error')).toEqual([]);
  expect(await shownTexts(page, '.msg .msg-text')).toEqual(['API key accepted.']);
  expect(await visible('#key-saved')).toBe(true);
  expect(await visible('#key-form')).toBe(false);
  const authed = requests.slice(before).filter((r) => r.authorization !== undefined);
  expect(authed.length).toBeGreaterThan(0);
  expect(authed.every((r) => r.authorization === `Bearer ${KEY}`)).toBe(true);

  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('#key-saved:not([hidden])', { timeout: WAIT_MS });
  expect(await visible('#key-form')).toBe(false);
  expect(await disabled('#create-btn')).toBe(false);
});

test('creating a page from the form lists it, and a duplicate shows the API error', async () => {
  await openPanel(KEY);
  await typeInto('#create-id', 'panel-a');
  await page.click('#create-btn');
  await waitMessage('Page panel-a created');
  await waitRow('panel-a', 'state', 'idle');
  expect(await rowOf('panel-a')).toMatchObject({ state: 'idle', url: 'about:blank' });
  // The new page is the chosen one.
  expect(await page.$eval('#chosen-id', (e) => e.textContent)).toBe('panel-a');
  expect(await page.$eval('#destroy-id', (e) => (e as HTMLInputElement).value)).toBe('panel-a');

  const pool = await w.call<PoolBody>('GET', '/api/v1/system/status/pages', { auth: false });
  expect(pool.body.pages.map((p) => p.page_id)).toEqual(['panel-a']);

  await typeInto('#create-id', 'panel-a');
  await page.click('#create-btn');
  await waitMessage('Create page failed: Page panel-a already exists');
  const again = await w.call<PoolBody>('GET', '/api/v1/system/status/pages', { auth: false });
  expect(again.body.pages).toHaveLength(1);
});

test('navigating through the form shows the fixture title and a live screenshot', async () => {
  await createPage('panel-a');
  await openPanelOn('panel-a');
  maxShotsInFlight = shotsInFlight.size;
  // The API's own validation message reaches the user.
  await typeInto('#nav-url', 'example.com');
  await page.click('#nav-btn');
  await waitMessage("Navigate panel-a failed: 'url' must be an absolute URL with a scheme");

  await typeInto('#nav-url', `${fx.url}/`);
  await page.click('#nav-btn');
  await waitRow('panel-a', 'title', 'Fixture home', NAV_WAIT_MS);
  await waitMessage(`Page panel-a loaded ${fx.url}/ (HTTP 200)`);
  expect(fx.seen).toContain('GET /');

  // A screenshot taken after the navigation is on screen: a decodable PNG.
  await page.waitForFunction(
    (u: string) => {
      const img = document.getElementById('shot-img') as HTMLImageElement;
      return (
        !img.hidden &&
        img.complete &&
        img.naturalWidth > 0 &&
        img.src.startsWith('data:image/png;base64,') &&
        document.getElementById('shot-status')!.textContent.includes(u)
      );
    },
    { timeout: NAV_WAIT_MS },
    `${fx.url}/`,
  );
  const size = await page.$eval('#shot-img', (e) => ({
    w: (e as HTMLImageElement).naturalWidth,
    h: (e as HTMLImageElement).naturalHeight,
  }));
  expect(size.w).toBeGreaterThan(100);
  expect(size.h).toBeGreaterThan(100);

  // It keeps refreshing, one request at a time.
  const done = shotsDone;
  await until('two more screenshots', () => shotsDone >= done + 2);
  expect(maxShotsInFlight).toBe(1);

  const pool = await w.call<PoolBody>('GET', '/api/v1/system/status/pages', { auth: false });
  expect(pool.body.pages).toEqual([
    expect.objectContaining({ page_id: 'panel-a', url: `${fx.url}/`, title: 'Fixture home' }),
  ]);
});

test('a page title is shown as text, never parsed as HTML', async () => {
  const title = '<img src=x onerror="window.__pwned=1"><b>bold</b>';
  const html = `<title>${title.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</title><p>x</p>`;
  await createPage('panel-a');
  await openPanelOn('panel-a');
  await typeInto('#nav-url', `data:text/html,${encodeURIComponent(html)}`);
  await page.click('#nav-btn');
  await waitRow('panel-a', 'title', title, NAV_WAIT_MS);
  expect(await page.$$eval('#pool-body img, #pool-body b', (els) => els.length)).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBe(
    undefined,
  );
});

test('destroying from the form removes the page; destroying it again shows "Page not found"', async () => {
  await createPage('panel-a');
  await openPanelOn('panel-a');
  expect(await page.$eval('#destroy-id', (e) => (e as HTMLInputElement).value)).toBe('panel-a');
  await page.click('#destroy-btn');
  await waitMessage('Page panel-a destroyed');
  await page.waitForFunction(
    () =>
      !document.querySelector('#pool-body tr') &&
      !document.getElementById('pool-empty')!.hidden &&
      document.getElementById('chosen-id')!.textContent === 'none' &&
      (document.getElementById('shot-img') as HTMLImageElement).hidden,
    { timeout: WAIT_MS },
  );
  expect(await disabled('#nav-btn')).toBe(true);

  const pool = await w.call<PoolBody>('GET', '/api/v1/system/status/pages', { auth: false });
  expect(pool.body.pages).toEqual([]);
  const shot = await w.call('GET', '/api/v1/ops/panel-a/screenshot');
  expect(shot.status).toBe(404);
  expect(shot.body).toMatchObject({ success: false, error: 'Page not found' });

  await typeInto('#destroy-id', 'panel-a');
  await page.click('#destroy-btn');
  await waitMessage('Destroy page panel-a failed: Page not found');
});

test('page ids are encoded in URLs', async () => {
  const id = 'a/b ?#%';
  await createPage(id);
  const from = requests.length;
  await openPanelOn(id);
  await waitRow(id, 'state', 'idle');
  const shotUrl = `${w.url}/api/v1/ops/${encodeURIComponent(id)}/screenshot`;
  await until('a screenshot of the odd id', () =>
    requests.slice(from).some((r) => r.url === shotUrl),
  );
  await page.waitForFunction(
    () => (document.getElementById('shot-img') as HTMLImageElement).naturalWidth > 0,
    { timeout: WAIT_MS },
  );
  const api = await w.call('GET', `/api/v1/ops/${encodeURIComponent(id)}/screenshot`);
  expect(api.status).toBe(200);
});

test('a stopped browser is reported plainly and Start brings it back', async () => {
  // One page is open, so Stop asks first.
  await createPage('panel-a');
  await openPanel(KEY);
  await waitRow('panel-a', 'state', 'idle');
  const asked = dialogs.length;
  await page.click('#stop-btn');
  await page.waitForFunction(
    () =>
      !document.getElementById('pool-down')!.hidden &&
      document.getElementById('pool-down')!.textContent.includes('not initialized') &&
      document.getElementById('nav-summary')!.textContent.startsWith('Stopped'),
    { timeout: WAIT_MS },
  );
  expect(dialogs.slice(asked)).toEqual(['Stop the browser? 1 page will be closed.']);
  await waitMessage('Navigator stopped');
  expect(await page.$eval('#pool-body', (e) => e.children.length)).toBe(0);
  const status = await w.call<{ initialized: boolean }>('GET', '/api/v1/system/status');
  expect(status.body.initialized).toBe(false);
  expect((await w.call('GET', '/api/v1/system/status/pages')).status).toBe(500);

  await page.click('#pool-start-btn');
  await page.waitForFunction(
    () =>
      document.getElementById('pool-down')!.hidden &&
      document.getElementById('nav-summary')!.textContent === 'Running' &&
      document.getElementById('pool-summary')!.textContent.startsWith('0 of 5 pages'),
    { timeout: NAV_WAIT_MS },
  );
  await waitMessage('Navigator started');
  expect((await w.call<{ initialized: boolean }>('GET', '/api/v1/system/status')).body).toEqual(
    expect.objectContaining({ initialized: true, page_count: 0 }),
  );
});

test('"Forget key" asks for the key again, also after a reload', async () => {
  await openPanel(KEY);
  expect(await disabled('#create-btn')).toBe(false);
  await page.click('#key-forget');
  await page.waitForSelector('#key-form:not([hidden])', { timeout: WAIT_MS });
  expect(await disabled('#create-btn')).toBe(true);
  await page.reload({ waitUntil: 'load' });
  expect(await visible('#key-form')).toBe(true);
  expect(await visible('#key-saved')).toBe(false);
});
