import fs from 'node:fs';
import path from 'node:path';
import type { Fixture } from '@persona-browser/testkit/fixture';
import {
  AWKWARD_TEXT,
  AWKWARD_TITLE,
  freePort,
  startFixture,
} from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

let w: RunningWorker;
let site: Fixture;

beforeAll(async () => {
  site = await startFixture();
  // DevTools on a port too: a test plays a person who crashes a tab through it.
  w = await startWorker({ env: { DEVTOOLS_PORT: '0' } });
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

type Body = Record<string, any>;

async function createPage(id?: string): Promise<string> {
  const r = await w.call<Body>('POST', '/api/v1/ops/create-page', {
    body: id ? { page_id: id } : {},
  });
  expect(r.status).toBe(200);
  return r.body.page_id as string;
}

async function pageEntry(id: string): Promise<Body | undefined> {
  const r = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  return (r.body.pages as Body[]).find((p) => p.page_id === id);
}

async function waitForState(id: string, state: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    if ((await pageEntry(id))?.state === state) return Date.now() - started;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`page ${id} never became ${state}`);
}

describe('create-page and destroy-page', () => {
  test('create answers about:blank, idle and the pool size; destroy (POST and DELETE) removes it', async () => {
    const r = await w.call<Body>('POST', '/api/v1/ops/create-page', { body: { page_id: 'c1' } });
    expect(r.body).toEqual({
      success: true,
      page_id: 'c1',
      message: expect.any(String),
      url: 'about:blank',
      state: 'idle',
      total_pages: 1,
    });
    const generated = await createPage();
    expect(generated).toMatch(/\S+/);
    const pool = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
    expect(pool.body.total_pages).toBe(2);
    expect(pool.body.status_by_state).toEqual({
      idle: 2,
      busy: 0,
      loading: 0,
      error: 0,
      crashed: 0,
      stuck: 0,
    });
    const entry = (pool.body.pages as Body[]).find((p) => p.page_id === 'c1');
    expect(entry).toEqual({
      page_id: 'c1',
      state: 'idle',
      current_operation: null,
      operation_duration: null,
      responsive: true,
      loading: false,
      stuck: false,
      error_count: 0,
      leased: false,
      lease_expires_in: null,
      last_activity: expect.any(Number),
      url: 'about:blank',
      title: '',
    });
    const d1 = await w.call<Body>('POST', '/api/v1/ops/c1/destroy-page');
    expect(d1.body).toEqual({
      success: true,
      page_id: 'c1',
      message: expect.any(String),
      total_pages: 1,
    });
    const d2 = await w.call<Body>('DELETE', `/api/v1/ops/${generated}/destroy-page`);
    expect(d2.body.total_pages).toBe(0);
    expect((await w.call('POST', '/api/v1/ops/c1/extract-content')).status).toBe(404);
  });

  test('pages are never created implicitly', async () => {
    const r = await w.call<Body>('POST', '/api/v1/ops/ghost/navigate', { body: { url: site.url } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ success: false, error: 'Page not found', page_id: 'ghost' });
    expect(await pageEntry('ghost')).toBeUndefined();
  });
});

describe('navigate, extract-content, screenshot', () => {
  let id: string;
  beforeAll(async () => {
    id = await createPage('nav');
  });
  afterAll(async () => {
    await w.call('DELETE', `/api/v1/ops/${id}/destroy-page`);
  });

  test('navigate pauses about 2 s, then reports status_code and final_url after redirects', async () => {
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `${site.url}/redirect` },
    });
    expect(r.body).toEqual({
      success: true,
      page_id: id,
      url: `${site.url}/redirect`,
      status_code: 200,
      final_url: `${site.url}/second`,
    });
    expect(r.ms).toBeGreaterThan(1700);
    const missing = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `${site.url}/missing` },
    });
    expect(missing.body.status_code).toBe(404);
  });

  test('extract-content returns the live HTML and title the fixture served', async () => {
    await w.call('POST', `/api/v1/ops/${id}/navigate`, { body: { url: `${site.url}/` } });
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`);
    expect(r.body).toMatchObject({
      success: true,
      page_id: id,
      url: `${site.url}/`,
      title: 'Fixture home',
    });
    expect(r.body.content).toContain('<h1 id="greeting">Hello from the fixture</h1>');
    expect(r.body.content_length).toBe((r.body.content as string).length);
    const entry = await pageEntry(id);
    expect(entry).toMatchObject({ url: `${site.url}/`, title: 'Fixture home', state: 'idle' });
  });

  test('extract-content keeps every character the page holds: quotes, backslashes, beyond ASCII, emoji, control characters', async () => {
    await w.call('POST', `/api/v1/ops/${id}/navigate`, { body: { url: `${site.url}/awkward` } });
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`);
    expect(r.status).toBe(200);
    expect(r.body.title).toBe(AWKWARD_TITLE);
    const content = r.body.content as string;
    const text = AWKWARD_TEXT.replace('<tag>', '&lt;tag&gt;');
    expect(content).toContain(`<p id="awkward">${text}\u0001\u001f\u007f\ud800</p>`);
    expect(content).toContain(`<pre>${'line\n'.repeat(2000)}</pre>`);
    expect(r.body.content_length).toBe(content.length);
  });

  test('screenshot is a PNG of the viewport; full=true adds the whole page and leaves the viewport as it was', async () => {
    const nav = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `${site.url}/tall` },
    });
    expect(nav.body).toMatchObject({ success: true });
    const png = (b64: string): { w: number; h: number } => {
      const buf = Buffer.from(b64, 'base64');
      expect(buf.subarray(1, 4).toString()).toBe('PNG');
      return { w: buf.readUInt32BE(16), h: buf.readUInt32BE(20) };
    };
    const plain = await w.call<Body>('GET', `/api/v1/ops/${id}/screenshot`);
    expect(plain.body).toMatchObject({ success: true });
    expect(plain.body.full_screenshot).toBeNull();
    expect(plain.body.url).toBe(`${site.url}/tall`);
    const view = png(plain.body.screenshot as string);
    const full = await w.call<Body>('GET', `/api/v1/ops/${id}/screenshot?full=true`);
    const whole = png(full.body.full_screenshot as string);
    expect(png(full.body.screenshot as string)).toEqual(view);
    // The full page is the document's width: the viewport less its scrollbar.
    expect(whole.w).toBeLessThanOrEqual(view.w);
    expect(whole.w).toBeGreaterThan(view.w - 30);
    expect(whole.h).toBeGreaterThan(5000);
    const after = await w.call<Body>('GET', `/api/v1/ops/${id}/screenshot`);
    expect(png(after.body.screenshot as string)).toEqual(view);
    const bad = await w.call<Body>('GET', `/api/v1/ops/${id}/screenshot?full=maybe`);
    expect(bad.status).toBe(400);
  });

  test('an unreachable site is a browser-level failure: 200 with success false, page still usable', async () => {
    const closed = await freePort();
    // Counted from here: a failure of another test on this page counts on it too.
    const before = Number((await pageEntry(id))?.error_count);
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `http://127.0.0.1:${closed}/` },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      error: expect.stringMatching(/ERR_CONNECTION_REFUSED/),
      page_id: id,
    });
    expect(await pageEntry(id)).toMatchObject({ state: 'error', error_count: before + 1 });
    const ok = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `${site.url}/second` },
    });
    expect(ok.body.success).toBe(true);
    expect(await pageEntry(id)).toMatchObject({ state: 'idle' });
  });
});

describe('URL schemes navigate opens', () => {
  let id: string;
  beforeAll(async () => {
    id = await createPage('schemes');
  });
  afterAll(async () => {
    await w.call('DELETE', `/api/v1/ops/${id}/destroy-page`);
  });

  test('data: and about:blank are opened like any page', async () => {
    const doc = 'data:text/html,<title>inline</title><p id="x">written into the URL</p>';
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, { body: { url: doc } });
    expect(r.body).toMatchObject({ success: true, final_url: doc });
    const read = await w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`);
    expect(read.body).toMatchObject({ title: 'inline' });
    expect(read.body.content).toContain('written into the URL');
    const blank = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: 'about:blank' },
    });
    expect(blank.body).toMatchObject({ success: true, final_url: 'about:blank' });
  });

  test.each([
    ['javascript:alert(1)', /scheme javascript: is not opened/],
    ['chrome://settings', /scheme chrome: is not opened/],
    ['view-source:http://example.com/', /scheme view-source: is not opened/],
    ['about:settings', /about:blank, no other about: page/],
    ['file:///etc/hostname', /ALLOW_FILE_URLS=true/],
    ['example.com/no-scheme', /absolute URL with a scheme/],
  ])('%s is refused with 400 and the reason', async (url, reason) => {
    const r = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, { body: { url } });
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: { success: false, error: expect.stringMatching(reason), page_id: id },
    });
  });
});

/**
 * A worker whose waits are cut short (LOCK_WAIT_SECONDS, NAVIGATION_TIMEOUT_SECONDS), so that
 * the 408 and 409 rules are measured in seconds instead of a minute; the defaults are
 * 30 s and 60 s (config.unit.test.ts). It also opens file: URLs (ALLOW_FILE_URLS).
 */
describe('a navigation that never ends, with short waits', () => {
  const NAV_S = 3;
  const LOCK_S = 1.5;
  let quick: RunningWorker;
  beforeAll(async () => {
    quick = await startWorker({
      env: {
        NAVIGATION_TIMEOUT_SECONDS: String(NAV_S),
        LOCK_WAIT_SECONDS: String(LOCK_S),
        ALLOW_FILE_URLS: 'true',
      },
    });
    await quick.waitInitialized();
  });
  afterAll(async () => {
    await quick?.stop();
  });

  const entryOf = async (id: string): Promise<Body | undefined> => {
    const r = await quick.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
    return (r.body.pages as Body[]).find((p) => p.page_id === id);
  };

  test('408 past the navigation timeout, 409 for a call that waited past the lock wait, status/pages fast throughout, page usable after', async () => {
    await quick.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'hang' } });
    const nav = quick.call<Body>('POST', '/api/v1/ops/hang/navigate', {
      body: { url: `${site.url}/hang` },
    });
    const until = Date.now() + 5_000;
    let entry = await entryOf('hang');
    while (entry?.state !== 'loading' && Date.now() < until) entry = await entryOf('hang');
    expect(entry).toMatchObject({ state: 'loading', current_operation: 'navigate', loading: true });
    // A second call queues behind the navigation and gives up with 409 after the lock wait.
    const waiting = quick.call<Body>('POST', '/api/v1/ops/hang/extract-content');
    const statusTimes: number[] = [];
    while (statusTimes.length < 10) {
      statusTimes.push(
        (await quick.call('GET', '/api/v1/system/status/pages', { auth: false })).ms,
      );
    }
    const busy = await waiting;
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ success: false, page_id: 'hang', error: expect.any(String) });
    expect(busy.ms).toBeGreaterThanOrEqual(LOCK_S * 1000);
    const r = await nav;
    expect(r.status).toBe(408);
    expect(r.body).toEqual({
      success: false,
      error: `Navigation exceeded ${NAV_S} s`,
      page_id: 'hang',
    });
    // The timeout counts from after the pause of about 2 s before the navigation starts.
    expect(r.ms).toBeGreaterThan(NAV_S * 1000 + 1_500);
    statusTimes.sort((a, b) => a - b);
    expect(statusTimes[Math.floor(statusTimes.length / 2)]).toBeLessThan(100);
    const after = await quick.call<Body>('POST', '/api/v1/ops/hang/navigate', {
      body: { url: `${site.url}/` },
    });
    expect(after.body).toMatchObject({ success: true, status_code: 200 });
    expect(await entryOf('hang')).toMatchObject({ state: 'idle' });
  });

  test('with ALLOW_FILE_URLS=true, file: URLs open', async () => {
    const file = path.join(quick.dir, 'local.html');
    fs.writeFileSync(file, '<title>from disk</title><p>local file</p>');
    const r = await quick.call<Body>('POST', '/api/v1/ops/hang/navigate', {
      body: { url: `file://${file}` },
    });
    expect(r.body).toMatchObject({ success: true, final_url: `file://${file}` });
    const read = await quick.call<Body>('POST', '/api/v1/ops/hang/extract-content');
    expect(read.body.title).toBe('from disk');
  });
});

describe('page health', () => {
  test('a renderer that stops answering becomes stuck within 10 s while status/pages stays fast; destroy still works', async () => {
    const statusTimes = async (): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < 10; i += 1)
        times.push((await w.call('GET', '/api/v1/system/status/pages', { auth: false })).ms);
      return times.sort((a, b) => a - b);
    };
    const id = await createPage('freeze');
    const before = await statusTimes();
    await w.call('POST', `/api/v1/ops/${id}/navigate`, { body: { url: `${site.url}/freeze` } });
    const took = await waitForState(id, 'stuck', 15_000);
    expect(took).toBeLessThan(10_000);
    const entry = await pageEntry(id);
    expect(entry).toMatchObject({ stuck: true, responsive: false });
    // Fast is relative to the same route with no page frozen (a loaded machine slows both): it
    // never waits on the frozen renderer, which would take as long as the detection did.
    const during = await statusTimes();
    const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)] ?? 0;
    expect(median(during)).toBeLessThan(3 * median(before) + 25);
    expect(during[during.length - 1]).toBeLessThan(took / 2);
    const d = await w.call<Body>('DELETE', `/api/v1/ops/${id}/destroy-page`);
    expect(d.body.success).toBe(true);
    expect(await pageEntry(id)).toBeUndefined();
  }, 40_000);

  test('a crashed tab is reported crashed, refuses calls at once, and comes back with a navigation', async () => {
    const id = await createPage('crash');
    await w.call('POST', `/api/v1/ops/${id}/navigate`, { body: { url: `${site.url}/?crashme` } });
    // Its renderer dies, as when a tab runs out of memory: crashed from DevTools.
    const person = await Observer.attach(w);
    const tab = await person.page('?crashme');
    const devtools = await tab.createCDPSession();
    // The command never answers: its renderer is gone.
    devtools.send('Page.crash').catch(() => undefined);
    await waitForState(id, 'crashed', 10_000);
    await person.detach();
    const read = await w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`);
    expect(read.body).toMatchObject({ success: false, error: expect.stringMatching(/crash/i) });
    expect(read.ms).toBeLessThan(1_000);
    const back = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `${site.url}/` },
    });
    expect(back.body).toMatchObject({ success: true, status_code: 200 });
    expect(await pageEntry(id)).toMatchObject({ state: 'idle' });
    await w.call('DELETE', `/api/v1/ops/${id}/destroy-page`);
  }, 40_000);
});
