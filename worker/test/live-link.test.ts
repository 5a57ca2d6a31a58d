import type { BrowserContext, Page } from 'puppeteer-core';
import { newTokenId, TokenSigner } from '@persona-browser/service-kit';
import type { TokenScope } from '@persona-browser/service-kit';
import type { ClientBrowser } from '@persona-browser/testkit/client-browser';
import { launchClientBrowser } from '@persona-browser/testkit/client-browser';
import { shown } from '@persona-browser/testkit/on-screen';
import { RfbClient } from '@persona-browser/testkit/rfb-client';
import { RECORDER, seen } from '@persona-browser/testkit/recorder';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';
import type { PageProblems } from '@persona-browser/testkit/page-problems';
import { pageProblems } from '@persona-browser/testkit/page-problems';
import { VIEWER_CONNECT_MS, viewerLive } from '@persona-browser/testkit/viewer';

/**
 * The live view for a person who has no service key: a `live` token (of the waker, or the link
 * `ask-person` answers) opens it, limited to its page, until the token expires or is revoked.
 * The real worker with its Xvfb, x11vnc and headed Chromium; the person is a second, headless
 * Chromium at the viewer page; the page they drive records the trusted clicks it receives.
 */

const PERSONA = 'linker';
const WAIT_MS = 30_000;
let w: RunningWorker;
let client: ClientBrowser;
type Body = Record<string, any>;

const signer = new TokenSigner(KEY);

/** A token as the waker makes them, signed with the key derived from the service key. */
function token(
  scope: TokenScope,
  pageId: string | null,
  o: { persona?: string; expS?: number } = {},
): { id: string; token: string; exp: number } {
  const id = newTokenId();
  const exp = o.expS ?? Math.floor(Date.now() / 1000) + 600;
  const t = signer.sign({
    id,
    persona: o.persona ?? PERSONA,
    scope,
    page_id: pageId,
    label: 'test',
    exp,
  });
  return { id, token: t, exp };
}

/** POST /vnc/session with a bearer value: the status, body and the session cookie it set. */
async function openSession(
  bearer: string,
): Promise<{ status: number; body: Body; cookie: string }> {
  const r = await fetch(`${w.url}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}` },
  });
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { status: r.status, body: (await r.json()) as Body, cookie };
}

const viaCookie = (cookie: string) => ({ auth: false, headers: { cookie } });

/**
 * A bare RFB client on a session of `bearer`: unlike the viewer page it never asks the server
 * whether its session still stands, so only the server can end it. Resolves to when it was
 * closed by the server (epoch ms) and with what code.
 */
async function rawViewer(bearer: string): Promise<() => Promise<{ at: number; code: number }>> {
  const s = await openSession(bearer);
  expect(s.status).toBe(200);
  const c = await RfbClient.connect(`${w.url.replace('http', 'ws')}/vnc/websockify`, s.cookie);
  await c.handshake();
  const closed = new Promise<{ at: number; code: number }>((resolve) =>
    c.ws.once('close', (code) => resolve({ at: Date.now(), code })),
  );
  return () =>
    Promise.race([
      closed,
      sleep(WAIT_MS).then(() => Promise.reject(new Error('the server left the viewer open'))),
    ]);
}

/** The fragment's token of a live_url. */
const tokenOf = (liveUrl: string): string =>
  decodeURIComponent(new URL(liveUrl).hash.replace(/^#token=/, ''));

async function freshRecorder(): Promise<void> {
  await w.call('DELETE', '/vnc/control');
  const nav = await w.call<Body>('POST', '/api/v1/ops/rec/navigate', { body: { url: RECORDER } });
  expect(nav.status).toBe(200);
}

async function newContext(): Promise<{ ctx: BrowserContext; page: Page; errors: string[] }> {
  const ctx = await client.browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(String(err)));
  problemsOf.set(page, pageProblems(page));
  return { ctx, page, errors };
}

/** What went wrong for each viewer page, named when it is not live in time. */
const problemsOf = new WeakMap<Page, PageProblems>();

const waitLive = (page: Page): Promise<void> =>
  viewerLive(page, VIEWER_CONNECT_MS, problemsOf.get(page));

/** Waits until the viewer says it is in control of `rec` (a live link takes over at once). */
const inControl = (page: Page): Promise<unknown> =>
  page.waitForFunction(
    () => document.getElementById('mode')?.textContent === 'You are in control of rec',
    { timeout: WAIT_MS },
  );

/** Waits until the viewer draws the screen: the display's size, and more than a blank canvas. */
const screenShown = (page: Page): Promise<unknown> =>
  page.waitForFunction(
    () => {
      const c = document.querySelector<HTMLCanvasElement>('#screen canvas');
      if (!c || c.width !== 1920 || c.height !== 1080) return false;
      const data = (c.getContext('2d') as CanvasRenderingContext2D).getImageData(
        0,
        0,
        1920,
        1080,
      ).data;
      const colours = new Set<number>();
      for (let i = 0; i < data.length; i += 4 * 997)
        colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
      return colours.size > 3;
    },
    { timeout: WAIT_MS, polling: 200 },
  );

/**
 * When the viewer stops showing the live screen (epoch ms, the page's clock: the same machine's),
 * watched from the page so that the moment is not late by a poll's interval.
 */
async function watchDisconnect(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const status = document.getElementById('status') as HTMLElement;
    const w = window as unknown as { __gone?: number };
    new MutationObserver(() => {
      if (status.dataset.state !== 'connected' && w.__gone === undefined) w.__gone = Date.now();
    }).observe(status, { attributes: true, childList: true, subtree: true });
  });
  return async () => {
    const handle = await page.waitForFunction(
      () => (window as unknown as { __gone?: number }).__gone,
      { timeout: WAIT_MS },
    );
    return (await handle.jsonValue()) as number;
  };
}

beforeAll(async () => {
  w = await startWorker({ persona: PERSONA, env: { LIVE_CONTROL_GRACE_SECONDS: '2' } });
  await w.waitInitialized();
  for (const page_id of ['rec', 'other'])
    expect((await w.call('POST', '/api/v1/ops/create-page', { body: { page_id } })).status).toBe(
      200,
    );
  await freshRecorder();
  client = await launchClientBrowser();
});
afterAll(async () => {
  await client?.close();
  await w?.stop();
});

describe('/vnc/session with a token', () => {
  test('opens with a live or full token of this persona and says its page limit; a read token is 403, another persona’s 401', async () => {
    const limited = await openSession(token('live', 'rec').token);
    expect(limited.status).toBe(200);
    expect(limited.body).toMatchObject({ success: true, page_limit: 'rec' });
    const asked = await w.call<Body>('GET', '/vnc/session', viaCookie(limited.cookie));
    expect(asked.status).toBe(200);
    expect(asked.body.page_limit).toBe('rec');

    const any = await openSession(token('live', null).token);
    expect(any.status).toBe(200);
    expect(any.body.page_limit).toBeNull();
    expect((await openSession(token('full', 'other').token)).body.page_limit).toBe('other');
    expect((await openSession(KEY)).body.page_limit).toBeNull();

    const read = await openSession(token('read', null).token);
    expect(read.status).toBe(403);
    expect(read.body).toEqual({ detail: expect.stringMatching(/scope 'read'/) });
    expect(read.cookie).toBe('');
    const stranger = await openSession(token('live', null, { persona: 'someone-else' }).token);
    expect(stranger.status).toBe(401);
    expect(stranger.body).toEqual({ detail: expect.stringMatching(/another persona/) });
    expect(stranger.cookie).toBe('');
  });

  test('a session that lives past its token is never given: expires_in is the token’s', async () => {
    const s = await openSession(
      token('live', 'rec', { expS: Math.floor(Date.now() / 1000) + 30 }).token,
    );
    expect(s.status).toBe(200);
    expect(s.body.expires_in).toBeGreaterThan(25);
    expect(s.body.expires_in).toBeLessThanOrEqual(31);
  });
});

describe('control with a page-limited credential', () => {
  test('its session and its bearer token take control of their page only: another page is 403 {detail}', async () => {
    await freshRecorder();
    const t = token('live', 'rec');
    const s = await openSession(t.token);
    const refused = await w.call<Body>('POST', '/vnc/control', {
      ...viaCookie(s.cookie),
      body: { page_id: 'other' },
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ detail: 'This live-view session is limited to page rec' });
    const bearer = await w.call<Body>('POST', '/vnc/control', {
      auth: false,
      headers: { authorization: `Bearer ${t.token}` },
      body: { page_id: 'other' },
    });
    expect(bearer.status).toBe(403);
    expect(bearer.headers.get('set-cookie')).toBeNull();
    // Nobody was given the other page.
    expect((await w.call<Body>('GET', '/vnc/control')).body.controlled).toBe(false);

    const own = await w.call<Body>('POST', '/vnc/control', {
      ...viaCookie(s.cookie),
      body: { page_id: 'rec' },
    });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ controlled: true, page_id: 'rec', by_you: true });
    const back = await w.call<Body>('DELETE', '/vnc/control', viaCookie(s.cookie));
    expect(back.body).toMatchObject({ success: true, page_id: 'rec' });
  });

  test('it cannot hand back another page that someone else controls', async () => {
    const keyed = await openSession(KEY);
    const took = await w.call<Body>('POST', '/vnc/control', {
      ...viaCookie(keyed.cookie),
      body: { page_id: 'other' },
    });
    expect(took.status).toBe(200);
    const limited = await openSession(token('live', 'rec').token);
    const refused = await w.call<Body>('DELETE', '/vnc/control', viaCookie(limited.cookie));
    expect(refused.status).toBe(403);
    expect((await w.call<Body>('GET', '/vnc/control')).body).toMatchObject({
      controlled: true,
      page_id: 'other',
    });
    await w.call('DELETE', '/vnc/control', viaCookie(keyed.cookie));
  });
});

describe('ask-person’s live_url', () => {
  test('wait false answers the link at once; a person opens it with no key, drives only that page, hands it back; the joined call answers handed_back and the link is dead', async () => {
    await freshRecorder();
    const asked = await w.call<Body>('POST', '/api/v1/ops/rec/ask-person', {
      body: { message: 'Click the middle of the page', timeout: 120, wait: false },
    });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ success: true, page_id: 'rec', handed_back: false });
    const liveUrl = String(asked.body.live_url);
    expect(liveUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${w.port}/vnc/#token=pbt_`));
    const expires = Date.parse(String(asked.body.expires_at));
    expect(expires - Date.now()).toBeGreaterThan(110_000);
    expect(expires - Date.now()).toBeLessThan(125_000);

    // The agent waits for the outcome: it joins the standing ask.
    const joined = w.call<Body>('POST', '/api/v1/ops/rec/ask-person', {
      body: { message: 'Click the middle of the page', wait: true },
    });
    let settled = false;
    void joined.then(() => (settled = true));

    const { ctx, page, errors } = await newContext();
    const sent: string[] = [];
    page.on('request', (r) => sent.push(r.url()));
    await page.goto(liveUrl, { waitUntil: 'load' });
    await waitLive(page);
    // No key asked for, nothing typed; the token left the address bar and never went in a URL.
    expect(await shown(page, '#key-form')).toBe(false);
    expect(page.url()).toBe(`${w.url}/vnc/`);
    const secret = tokenOf(liveUrl);
    expect(sent.map((u) => u.split('#')[0]).filter((u) => u?.includes(secret))).toEqual([]);
    // Taken over at once, with the ask shown and one plain way to hand it back.
    await inControl(page);
    expect(await page.$eval('#ask', (e) => e.textContent)).toContain(
      'Click the middle of the page',
    );
    expect(await shown(page, '#handback-btn')).toBe(true);
    expect(await page.$eval('#handback-btn', (e) => e.textContent)).toBe('Hand back rec');
    expect(await shown(page, '#page-select')).toBe(false);
    // The screen arrives: the page the person is asked to drive is on it.
    await screenShown(page);

    // A click in the viewer reaches the page as a trusted click at the same place on screen.
    const box = (await (await page.$('#screen canvas'))!.boundingBox())!;
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    let events: unknown[][] = [];
    for (let i = 0; i < 50 && events.length === 0; i++) {
      await sleep(200);
      events = await seen(w, 'rec');
    }
    expect(events).toHaveLength(1);
    const [kind, x, y, trusted] = events[0] as [string, number, number, boolean];
    expect([kind, trusted]).toEqual(['click', true]);
    expect(Math.abs(x - 960)).toBeLessThan(40);
    expect(Math.abs(y - 540)).toBeLessThan(40);

    // Another page is refused to this viewer.
    const other = await page.evaluate(async () => {
      const r = await fetch('/vnc/control', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ page_id: 'other' }),
      });
      return { status: r.status, body: (await r.json()) as unknown };
    });
    expect(other).toEqual({
      status: 403,
      body: { detail: 'This live-view session is limited to page rec' },
    });
    expect(settled).toBe(false);

    // The hand-back ends the ask: the agent's call answers, the viewers of the link are closed
    // at once (the bare one shows the server closed it, not the page noticing by itself).
    const raw = await rawViewer(secret);
    const gone = await watchDisconnect(page);
    await page.click('#handback-btn');
    const clicked = Date.now();
    const outcome = await joined;
    expect(outcome.status).toBe(200);
    expect(outcome.body).toMatchObject({ handed_back: true, live_url: liveUrl });
    const closed = await raw();
    expect(closed.code).toBe(4001);
    expect(closed.at - clicked).toBeLessThan(1000);
    expect((await gone()) - clicked).toBeLessThan(1000);
    await page.waitForFunction(
      () => document.getElementById('message')?.textContent?.includes('link has ended'),
      { timeout: WAIT_MS },
    );
    const again = await openSession(secret);
    expect(again.status).toBe(401);
    expect(again.body.detail).toMatch(/revoked/);
    expect(errors).toEqual([]);
    await ctx.close();
  });

  test('live_url names the address the caller reached (X-Forwarded-Host, -Proto); a second call on the standing ask gets its link', async () => {
    const headers = {
      'x-forwarded-host': 'persona.example:8443, inner.proxy',
      'x-forwarded-proto': 'https',
    };
    const first = await w.call<Body>('POST', '/api/v1/ops/other/ask-person', {
      headers,
      body: { message: 'Look', timeout: 60, wait: false },
    });
    expect(first.status).toBe(200);
    expect(first.body.live_url).toMatch(/^https:\/\/persona\.example:8443\/vnc\/#token=pbt_/);
    const plain = await w.call<Body>('POST', '/api/v1/ops/other/ask-person', {
      body: { message: 'Look', wait: false },
    });
    expect(plain.body.live_url).toBe(
      `http://127.0.0.1:${w.port}/vnc/#token=${encodeURIComponent(tokenOf(first.body.live_url))}`,
    );
    expect(plain.body.expires_at).toBe(first.body.expires_at);
    const s = await openSession(tokenOf(first.body.live_url));
    expect(s.body).toMatchObject({ page_limit: 'other', asked: 'Look' });
  });

  test('an ask whose waiting caller leaves ends, and its link with it', async () => {
    const abort = new AbortController();
    const waiting = fetch(`${w.url}/api/v1/ops/rec/ask-person`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Sign in', timeout: 120 }),
      signal: abort.signal,
    }).catch(() => null);
    let link: Body = {};
    for (let i = 0; i < 50 && !link.live_url; i++) {
      // The standing ask's link, as a second call sees it.
      link = (
        await w.call<Body>('POST', '/api/v1/ops/rec/ask-person', {
          body: { message: 'Sign in', wait: false },
        })
      ).body;
      if (!link.live_url) await sleep(100);
    }
    const s = await openSession(tokenOf(String(link.live_url)));
    expect(s.status).toBe(200);
    abort.abort();
    await waiting;
    let state = 200;
    for (let i = 0; i < 50 && state === 200; i++) {
      await sleep(100);
      state = (await w.call('GET', '/vnc/session', viaCookie(s.cookie))).status;
    }
    expect(state).toBe(401);
    expect((await openSession(tokenOf(String(link.live_url)))).status).toBe(401);
    // The page no longer waits: a new ask begins (not 409).
    const next = await w.call<Body>('POST', '/api/v1/ops/rec/ask-person', {
      body: { message: 'Again', timeout: 1, wait: true },
    });
    expect(next.body).toMatchObject({ handed_back: false });
  });
});

describe('a token session ends with its token', () => {
  test('the viewer opened with a token is closed within a second of its expiry', async () => {
    await freshRecorder();
    // Time itself is tested: long enough for both viewers to open, then the expiry is awaited.
    const t = token('live', 'rec', { expS: Math.floor(Date.now() / 1000) + 15 });
    const raw = await rawViewer(t.token);
    const { ctx, page } = await newContext();
    await page.goto(`${w.url}/vnc/#token=${encodeURIComponent(t.token)}`, { waitUntil: 'load' });
    await waitLive(page);
    await inControl(page);
    const gone = await watchDisconnect(page);
    // The server closes both: the bare client (which never polls) shows it is the server's doing.
    const closed = await raw();
    expect(closed.code).toBe(4001);
    expect(closed.at - t.exp * 1000).toBeGreaterThanOrEqual(-50);
    expect(closed.at - t.exp * 1000).toBeLessThan(1000);
    const at = await gone();
    expect(at - t.exp * 1000).toBeGreaterThanOrEqual(-50);
    expect(at - t.exp * 1000).toBeLessThan(1000);
    // Its control ended with it.
    expect((await w.call<Body>('GET', '/vnc/control')).body.controlled).toBe(false);
    await ctx.close();
  });

  test('a revoked token’s open viewer is closed within a second (the waker’s list pushed to the worker)', async () => {
    await freshRecorder();
    const t = token('live', 'rec');
    const { ctx, page } = await newContext();
    await page.goto(`${w.url}/vnc/#token=${encodeURIComponent(t.token)}`, { waitUntil: 'load' });
    await waitLive(page);
    await inControl(page);
    const raw = await rawViewer(t.token);
    const gone = await watchDisconnect(page);
    const pushed = Date.now();
    const r = await w.call<Body>('POST', '/api/v1/system/revoked-tokens', {
      body: { ids: [t.id] },
    });
    expect(r.status).toBe(200);
    const closed = await raw();
    expect(closed.code).toBe(4001);
    expect(closed.at - pushed).toBeLessThan(1000);
    expect((await gone()) - pushed).toBeLessThan(1000);
    expect((await w.call<Body>('GET', '/vnc/control')).body.controlled).toBe(false);
    await page.waitForFunction(
      () => document.getElementById('message')?.textContent?.includes('link has ended'),
      { timeout: WAIT_MS },
    );
    expect((await openSession(t.token)).status).toBe(401);
    await w.call('POST', '/api/v1/system/revoked-tokens', { body: { ids: [] } });
    await ctx.close();
  });
});
