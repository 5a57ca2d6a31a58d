import fs from 'node:fs';
import path from 'node:path';
import type { Refusal } from '@persona-browser/testkit/rfb-client';
import { RfbClient } from '@persona-browser/testkit/rfb-client';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';
import { RECORDER, seen } from '@persona-browser/testkit/recorder';
import { until as untilValue } from '@persona-browser/testkit/waker';

/**
 * The live view against a real worker: its own Xvfb, the x11vnc it starts for the view, the
 * real Chromium, and an RFB client speaking over the WebSocket bridge as noVNC does.
 */

const GRACE_S = 3;
const LEASE_S = 3;
let w: RunningWorker;
type Body = Record<string, any>;

const wsUrl = (): string => `${w.url.replace('http', 'ws')}/vnc/websockify`;

async function session(): Promise<string> {
  const r = await fetch(`${w.url}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(r.status).toBe(200);
  const set = r.headers.get('set-cookie') as string;
  return set.split(';')[0] as string;
}

async function viewer(cookie: string): Promise<RfbClient> {
  const c = await RfbClient.connect(wsUrl(), cookie);
  await c.handshake();
  return c;
}

/** What `read` gives once `ok` holds for it; fails after `ms`, naming `what` it waited for. */
const until = <T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  ms = 15_000,
): Promise<T> =>
  untilValue(
    async () => {
      const v = await read();
      return ok(v) ? v : null;
    },
    ms,
    what,
  );

/** The keysym of `z`, typed by a viewer in control as a marker. */
const MARK = 0x7a;

/**
 * The recorder's events before the marker `z` that `marker`, a viewer in control, types now:
 * input another viewer sent earlier, and saw an update answered after, has been handed to the
 * display by then if at all, so it would have reached the page before the marker.
 */
async function seenBeforeMark(marker: RfbClient): Promise<unknown[][]> {
  marker.key(MARK, true);
  marker.key(MARK, false);
  const events = await until(
    () => seen(w, 'rec'),
    (s) => s.some((e) => e[0] === 'key' && e[1] === 'z'),
    'the marker key typed in control to reach the page',
  );
  return events.slice(
    0,
    events.findIndex((e) => e[0] === 'key' && e[1] === 'z'),
  );
}

const control = (method: string, cookie: string | null, body?: unknown) =>
  w.call<Body>(method, '/vnc/control', {
    auth: cookie === null,
    headers: cookie ? { cookie } : {},
    body,
  });

beforeAll(async () => {
  w = await startWorker({
    env: {
      LIVE_CONTROL_GRACE_SECONDS: String(GRACE_S),
      LIVE_CONTROL_LEASE_SECONDS: String(LEASE_S),
    },
  });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'rec' } });
  const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
  expect(nav.status).toBe(200);
});
afterAll(async () => {
  await w?.stop();
});

describe('viewer page and noVNC assets', () => {
  test('GET /vnc/ serves our viewer page, which loads noVNC from the worker', async () => {
    const r = await fetch(`${w.url}/vnc/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const html = await r.text();
    expect(html).toContain('<script src="/ui/boot.js" data-module="/vnc/viewer.js"></script>');
    const boot = await fetch(`${w.url}/ui/boot.js`);
    expect(boot.headers.get('content-type')).toMatch(/javascript/);
    const js = await fetch(`${w.url}/vnc/viewer.js`);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(await js.text()).toContain("from '/vnc/novnc/core/rfb.js'");
  });

  test('noVNC core and vendor modules are served from the package with a JS content type', async () => {
    for (const p of ['core/rfb.js', 'core/websock.js', 'vendor/pako/lib/zlib/inflate.js']) {
      const r = await fetch(`${w.url}/vnc/novnc/${p}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/javascript/);
      const installed = fs.readFileSync(
        path.join(path.dirname(require.resolve('@novnc/novnc')), '..', p),
        'utf8',
      );
      expect(await r.text()).toBe(installed);
    }
    const missing = await fetch(`${w.url}/vnc/novnc/core/nope.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ success: false });
  });

  test('/vnc redirects to /vnc/', async () => {
    const r = await fetch(`${w.url}/vnc`, { redirect: 'manual' });
    expect(r.status).toBe(301);
    expect(r.headers.get('location')).toBe('/vnc/');
  });
});

describe('sessions', () => {
  test('POST /vnc/session needs the bearer key and sets an HttpOnly, SameSite=Strict cookie on /vnc', async () => {
    const none = await fetch(`${w.url}/vnc/session`, { method: 'POST' });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ detail: 'Invalid API key' });
    expect(none.headers.get('set-cookie')).toBeNull();
    const wrong = await fetch(`${w.url}/vnc/session`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);

    const ok = await fetch(`${w.url}/vnc/session`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ success: true, expires_in: 43200, live_view: true });
    const cookie = ok.headers.get('set-cookie') as string;
    expect(cookie).toMatch(/^pb_vnc_\d+=[0-9a-f]{64}; /);
    expect(cookie).toContain('Path=/vnc');
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Max-Age=43200');
    expect(cookie).not.toContain(KEY);

    const check = await fetch(`${w.url}/vnc/session`, {
      headers: { cookie: cookie.split(';')[0] as string },
    });
    expect(check.status).toBe(200);
    const bad = await fetch(`${w.url}/vnc/session`, {
      headers: { cookie: 'pb_vnc_1=' + 'a'.repeat(64) },
    });
    expect(bad.status).toBe(401);
  });

  test('the WebSocket is refused with 401 before the upgrade without a valid session cookie', async () => {
    const none = (await RfbClient.open(wsUrl())) as Refusal;
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toEqual({ detail: 'Invalid API key' });
    const forged = (await RfbClient.open(wsUrl(), `pb_vnc_80=${'0'.repeat(64)}`)) as Refusal;
    expect(forged.status).toBe(401);
    // The key itself is no cookie and no query parameter either.
    const keyed = (await RfbClient.open(`${wsUrl()}?key=${KEY}`, `pb_vnc=${KEY}`)) as Refusal;
    expect(keyed.status).toBe(401);
  });

  test('DELETE /vnc/session ends the session: its WebSocket closes and the cookie no longer opens one', async () => {
    const cookie = await session();
    const v = await viewer(cookie);
    const r = await fetch(`${w.url}/vnc/session`, { method: 'DELETE', headers: { cookie } });
    expect(r.status).toBe(200);
    expect(r.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await v.waitClosed()).code).toBe(4001);
    expect(((await RfbClient.open(wsUrl(), cookie)) as Refusal).status).toBe(401);
  });
});

describe('RFB over the bridge', () => {
  test('handshake: version, security None, ServerInit with the screen size, then a framebuffer update', async () => {
    const c = await RfbClient.connect(wsUrl(), await session());
    const hs = await c.handshake();
    expect(hs.version).toMatch(/^RFB 003\.00\d\n$/);
    expect(hs.securityTypes).toContain(1);
    expect(hs.init).toMatchObject({ width: 1920, height: 1080 });
    c.requestUpdate(false, 0, 0, 64, 48);
    const rects = await c.readUpdate();
    expect(rects.length).toBeGreaterThan(0);
    const covered = rects.reduce((a, r) => a + r.w * r.h, 0);
    expect(covered).toBeGreaterThanOrEqual(64 * 48);
    await c.close();
  });

  test('an unknown client message type closes the session', async () => {
    const c = await viewer(await session());
    c.send([99, 0, 0, 0]);
    const closed = await c.waitClosed();
    expect(closed.code).toBe(1002);
    expect(closed.reason).toMatch(/unknown client message type 99/);
  });
});

describe('read-only unless in control', () => {
  // The middle of the screen: inside the maximized browser window's page area.
  const X = 960;
  const Y = 600;

  // Every test starts with no control and a fresh recorder in front.
  afterEach(async () => {
    await control('DELETE', null);
    const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
    expect(nav.status).toBe(200);
  });

  test('a click and a key from a viewer without control never reach the page', async () => {
    // The recorder in front (a lease brings its page forward), then free again.
    const lease = await w.call<Body>('POST', '/api/v1/ops/rec/lease', { body: {} });
    await w.call('DELETE', '/api/v1/ops/rec/lease', { lease: lease.body.lease_token });
    const v = await viewer(await session());
    v.click(X, Y);
    v.key(0x61, true); // a
    v.key(0x61, false);
    // The same viewer's harmless messages still pass: an update answers after the input.
    v.requestUpdate(false, 0, 0, 16, 16);
    await v.readUpdate();
    // Nothing came before a key typed afterwards by a viewer in control.
    const cookie = await session();
    const marker = await viewer(cookie);
    expect((await control('POST', cookie, { page_id: 'rec' })).status).toBe(200);
    expect(await seenBeforeMark(marker)).toEqual([]);
    await marker.close();
    await v.close();
  });

  test('after POST /vnc/control the same viewer clicks and types into the page', async () => {
    const cookie = await session();
    const v = await viewer(cookie);
    const taken = await control('POST', cookie, { page_id: 'rec' });
    expect(taken.status).toBe(200);
    expect(taken.body).toMatchObject({
      success: true,
      page_id: 'rec',
      controlled: true,
      by_you: true,
      viewers: expect.any(Number),
    });
    v.click(X, Y);
    v.key(0x62, true); // b
    v.key(0x62, false);
    const events = await until(
      () => seen(w, 'rec'),
      (s) => s.length >= 2,
      'the click and the key to reach the page',
    );
    expect(events).toEqual([
      ['click', X, Y, true],
      ['key', 'b', true],
    ]);
    // Another viewer (another session) still only watches: its click comes in nowhere before
    // the controlling viewer's next key.
    const other = await viewer(await session());
    other.click(X, Y);
    other.requestUpdate(false, 0, 0, 16, 16);
    await other.readUpdate();
    expect(await seenBeforeMark(v)).toHaveLength(2);
    await other.close();
    await v.close();
  });

  test('while a person drives, API calls to the page get 423; after DELETE /vnc/control they work again', async () => {
    const cookie = await session();
    const v = await viewer(cookie);
    expect((await control('POST', cookie, { page_id: 'rec' })).status).toBe(200);
    const pool = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
    expect((pool.body.pages as Body[]).find((p) => p.page_id === 'rec')).toMatchObject({
      leased: true,
    });
    const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
    expect(nav.status).toBe(423);
    expect(nav.body).toMatchObject({ success: false, page_id: 'rec' });
    const click = await w.call<Body>('POST', '/api/v1/primitive/rec/click-position', {
      body: { x: 10, y: 10 },
    });
    expect(click.status).toBe(423);
    expect((await w.call<Body>('POST', '/api/v1/ops/rec/lease', { body: {} })).status).toBe(423);
    expect((await w.call<Body>('POST', '/api/v1/ops/rec/destroy-page')).status).toBe(423);
    // Neither the API click nor anything else reached the page.
    expect(await seen(w, 'rec')).toEqual([]);

    const state = await control('GET', null);
    expect(state.body).toMatchObject({ controlled: true, page_id: 'rec', by_you: false });

    const back = await control('DELETE', cookie);
    expect(back.status).toBe(200);
    expect(back.body).toMatchObject({ success: true, page_id: 'rec' });
    expect((await control('GET', cookie)).body).toMatchObject({ controlled: false, page_id: null });
    // Input from the viewer is dropped again (nothing before the key it types once it has
    // control back), and the API works again.
    v.click(960, 600);
    v.requestUpdate(false, 0, 0, 16, 16);
    await v.readUpdate();
    expect((await control('POST', cookie, { page_id: 'rec' })).status).toBe(200);
    expect(await seenBeforeMark(v)).toEqual([]);
    expect((await control('DELETE', cookie)).status).toBe(200);
    const again = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', {
      body: { url: RECORDER },
    });
    expect(again.status).toBe(200);
    await v.close();
  });

  test('while a person drives, calls that need the screen on another page get 423; reading calls run', async () => {
    expect(
      (await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'other' } })).status,
    ).toBe(200);
    try {
      const cookie = await session();
      const v = await viewer(cookie);
      expect((await control('POST', cookie, { page_id: 'rec' })).status).toBe(200);
      // A click or a screenshot of another page would pull the screen from under the person.
      const click = await w.call<Body>('POST', '/api/v1/primitive/other/click-position', {
        body: { x: 10, y: 10 },
      });
      expect(click.status).toBe(423);
      expect(click.body).toMatchObject({ success: false, page_id: 'other' });
      expect(String(click.body.error)).toMatch(/person is driving page rec/);
      expect((await w.call('GET', '/api/v1/ops/other/screenshot')).status).toBe(423);
      // What does not need the screen goes on.
      expect((await w.call('POST', '/api/v1/ops/other/extract-content', { body: {} })).status).toBe(
        200,
      );
      // The person's page stayed in front: their click still lands on it.
      v.click(X, Y);
      await until(
        () => seen(w, 'rec'),
        (e) => e.length >= 1,
        'the click to reach the page',
      );
      expect(await seen(w, 'rec')).toEqual([['click', X, Y, true]]);
      expect((await control('DELETE', cookie)).status).toBe(200);
      const after = await w.call<Body>('POST', '/api/v1/primitive/other/click-position', {
        body: { x: 10, y: 10 },
      });
      expect(after.status).toBe(200);
      await v.close();
    } finally {
      await w.call('POST', '/api/v1/ops/other/destroy-page');
    }
  });

  test('an API client holding the lease: taking control gets 423, and works once it releases', async () => {
    const lease = await w.call<Body>('POST', '/api/v1/ops/rec/lease', { body: {} });
    expect(lease.status).toBe(200);
    const cookie = await session();
    const refused = await control('POST', cookie, { page_id: 'rec' });
    expect(refused.status).toBe(423);
    expect(refused.body).toMatchObject({
      success: false,
      page_id: 'rec',
      error: expect.any(String),
    });
    await w.call('DELETE', '/api/v1/ops/rec/lease', { lease: lease.body.lease_token });
    const ok = await control('POST', cookie, { page_id: 'rec' });
    expect(ok.status).toBe(200);
  });

  test('another viewer in control: 423 until it hands back', async () => {
    const a = await session();
    const b = await session();
    expect((await control('POST', a, { page_id: 'rec' })).status).toBe(200);
    const refused = await control('POST', b, { page_id: 'rec' });
    expect(refused.status).toBe(423);
    expect(refused.body.error).toMatch(/another viewer/i);
    expect((await control('GET', b)).body).toMatchObject({ controlled: true, by_you: false });
    expect((await control('GET', a)).body).toMatchObject({ controlled: true, by_you: true });
  });

  test('bad requests: no page id 400, an unknown page 404, no auth 401', async () => {
    const cookie = await session();
    const none = await control('POST', cookie, {});
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ success: false, page_id: null });
    const unknown = await control('POST', cookie, { page_id: 'ghost' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, error: 'Page not found', page_id: 'ghost' });
    for (const method of ['GET', 'POST', 'DELETE']) {
      const body = method === 'POST' ? { page_id: 'rec' } : undefined;
      const r = await w.call<Body>(method, '/vnc/control', { auth: false, body });
      expect(r.status).toBe(401);
      expect(r.body).toEqual({ detail: 'Invalid API key' });
    }
  });

  test('the lease is renewed while the viewer stays connected; closing it hands control back after the grace', async () => {
    const cookie = await session();
    let v = await viewer(cookie);
    expect((await control('POST', cookie, { page_id: 'rec' })).status).toBe(200);
    // A reconnect within the grace keeps control.
    await v.close();
    await until(
      () => control('GET', cookie),
      (r) => r.body.viewers === 0,
      'the worker to see the viewer leave',
    );
    v = await viewer(cookie);
    // Well past the lease's own ttl: renewed while the viewer is connected, without any call.
    // Time itself is tested: past the lease's ttl.
    await sleep(Math.max(GRACE_S, LEASE_S) * 2000 + 1000);
    const held = await control('GET', cookie);
    expect(held.body).toMatchObject({ controlled: true, by_you: true, page_id: 'rec' });
    expect(held.body.lease_expires_in).toBeGreaterThan(0);
    const api = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
    expect(api.status).toBe(423);

    const closedAt = Date.now();
    await v.close();
    expect((await control('GET', cookie)).body).toMatchObject({ controlled: true });
    const released = await until(
      () => control('GET', cookie),
      (r) => r.body.controlled === false,
      'control to be handed back after the grace',
      GRACE_S * 1000 + 10_000,
    );
    expect(released.body.controlled).toBe(false);
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(GRACE_S * 1000 - 200);
    // The lease went with it: the API works on the page again.
    const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
    expect(nav.status).toBe(200);
  });

  test('a bearer caller without a session gets one with control; its viewer then drives', async () => {
    const r = await control('POST', null, { page_id: 'rec' });
    expect(r.status).toBe(200);
    const cookie = (r.headers.get('set-cookie') as string).split(';')[0] as string;
    const v = await viewer(cookie);
    expect((await control('GET', cookie)).body).toMatchObject({ by_you: true });
    v.click(X, Y);
    const events = await until(
      () => seen(w, 'rec'),
      (s) => s.length >= 1,
      'the click to reach the page',
    );
    expect(events).toEqual([['click', X, Y, true]]);
    await v.close();
    const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
    expect(nav.status).toBe(423);
  });
});
