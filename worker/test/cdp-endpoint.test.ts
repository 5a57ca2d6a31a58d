import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import type { Browser, Protocol } from 'puppeteer-core';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import { until } from '@persona-browser/testkit/waker';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';

/**
 * The DevTools endpoint for outside clients: puppeteer's own `connect`, with the service key in
 * a header, on the persona's browser. What each client could see and do is read from a second,
 * unfiltered client on the browser's DevTools port (the observer), never from the endpoint.
 */

let w: RunningWorker;
let site: Fixture;
let eye: Observer;
type Body = Record<string, any>;

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker({ env: { DEVTOOLS_PORT: '0' } });
  await w.waitInitialized();
  for (const id of ['pool-a', 'pool-b']) {
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
    await w.call('POST', `/api/v1/ops/${id}/navigate`, {
      body: { url: `${site.url}/?pool=${id}` },
    });
  }
  eye = await Observer.attach(w);
});
afterAll(async () => {
  await eye?.detach();
  await w?.stop();
  await site?.close();
});

const wsUrl = async (): Promise<string> => {
  const r = await w.call<Body>('GET', '/json/version');
  return r.body.webSocketDebuggerUrl as string;
};

const connect = async (headers: Record<string, string> = {}): Promise<Browser> =>
  puppeteer.connect({
    browserWSEndpoint: await wsUrl(),
    headers: { authorization: `Bearer ${KEY}`, ...headers },
    defaultViewport: null,
  });

/** Every page target of the browser, as the unfiltered observer sees them. */
async function allPages(): Promise<Protocol.Target.TargetInfo[]> {
  const session = await eye.browserSession();
  try {
    const { targetInfos } = await session.send('Target.getTargets');
    return targetInfos.filter((t) => t.type === 'page');
  } finally {
    await session.detach();
  }
}

const targetOf = async (marker: string): Promise<string> => {
  const found = (await allPages()).find((t) => t.url.includes(marker));
  if (!found) throw new Error(`no page at ${marker}`);
  return found.targetId;
};

test('GET /json/version needs the key and names the endpoint on the host the client used', async () => {
  expect((await w.call('GET', '/json/version', { auth: false })).status).toBe(401);
  const r = await w.call<Body>('GET', '/json/version');
  expect(r.status).toBe(200);
  expect(r.body.Browser).toMatch(/^Chrome\/\d+/);
  expect(r.body['User-Agent']).toMatch(/Mozilla\/5\.0/);
  expect(r.body.webSocketDebuggerUrl).toMatch(
    new RegExp(`^ws://127\\.0\\.0\\.1:${w.port}/devtools/browser/[0-9a-f-]{36}$`),
  );
});

test('a connection without the key is refused before any WebSocket opens', async () => {
  const endpoint = await wsUrl();
  // puppeteer rejects with the WebSocket's error event, which carries the HTTP status.
  const refusal = (headers?: Record<string, string>): Promise<string> =>
    puppeteer.connect({ browserWSEndpoint: endpoint, headers }).then(
      async (b) => {
        await b.disconnect();
        return 'connected';
      },
      (err: unknown) => String(Reflect.get(Object(err), 'message')),
    );
  expect(await refusal()).toMatch(/Unexpected server response: 401/);
  expect(await refusal({ authorization: 'Bearer wrong' })).toMatch(/401/);
});

test('a client drives a page of its own on the persona profile, and sees none of the pool', async () => {
  // The persona's cookie, set by one of the worker's own pages.
  const cookie = `c${Date.now()}`;
  await w.call('POST', '/api/v1/ops/pool-a/navigate', {
    body: { url: `${site.url}/cookie?v=${cookie}` },
  });
  const client = await connect();
  try {
    expect(await client.pages()).toEqual([]);
    const page = await client.newPage();
    await page.goto(`${site.url}/cookie`, { waitUntil: 'load' });
    expect(await page.title()).toBe(`cookies:persona=${cookie}`);
    expect(await page.evaluate(() => document.querySelector('p')?.textContent)).toBe('cookie');
    const shot = await page.screenshot({ type: 'png' });
    expect(Buffer.from(shot).subarray(1, 4).toString('latin1')).toBe('PNG');
    // Its page is a real tab of the persona's browser; the pool's pages stayed where they were.
    const urls = (await allPages()).map((t) => t.url);
    expect(urls).toEqual(expect.arrayContaining([`${site.url}/cookie`]));
    expect(urls.filter((u) => u.includes('pool=pool-b'))).toHaveLength(1);
    expect((await client.pages()).map((p) => p.url())).toEqual([`${site.url}/cookie`]);
    // A page its page opens is its own as well.
    const popup = new Promise<unknown>((resolve) => page.once('popup', resolve));
    await page.evaluate((url) => void window.open(url), `${site.url}/?popup=1`);
    await popup;
    await waitFor('the client to see the popup', async () =>
      (await client.pages()).some((p) => p.url().includes('popup=1')),
    );
  } finally {
    await client.disconnect();
  }
});

test('a pool page not leased to the client cannot be attached, closed or activated', async () => {
  const pool = await targetOf('pool=pool-b');
  const client = await connect();
  try {
    const session = await client.target().createCDPSession();
    const { targetInfos } = await session.send('Target.getTargets');
    expect(targetInfos.map((t) => t.targetId)).not.toContain(pool);
    const refused = /Page pool-b is not leased to this connection/;
    await expect(
      session.send('Target.attachToTarget', { targetId: pool, flatten: true }),
    ).rejects.toThrow(refused);
    await expect(session.send('Target.closeTarget', { targetId: pool })).rejects.toThrow(refused);
    await expect(session.send('Target.activateTarget', { targetId: pool })).rejects.toThrow(
      refused,
    );
    await expect(session.send('Browser.close')).rejects.toThrow(/not allowed/);
  } finally {
    await client.disconnect();
  }
  // The page is there and works.
  const r = await w.call<Body>('POST', '/api/v1/ops/pool-b/extract-content');
  expect(r.status).toBe(200);
  expect(await targetOf('pool=pool-b')).toBe(pool);
});

test('a pool page whose lease token the client presents is its to drive, and the lease holds', async () => {
  const lease = await w.call<Body>('POST', '/api/v1/ops/pool-b/lease', { body: { ttl: 30 } });
  const token = lease.body.lease_token as string;
  const client = await connect({ 'x-lease': token });
  try {
    const pages = await client.pages();
    expect(pages.map((p) => p.url())).toEqual([`${site.url}/?pool=pool-b`]);
    const [page] = pages;
    if (!page) throw new Error('no page');
    expect(await page.evaluate(() => document.title)).toBe('Fixture home');
    // A REST call without the token is refused while the client holds the lease.
    const refused = await w.call<Body>('POST', '/api/v1/ops/pool-b/extract-content');
    expect(refused.status).toBe(423);
    // The client's use renews the lease, as an API call with the token does.
    const left = async (): Promise<number> => {
      const r = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
      return (r.body.pages as Body[]).find((p) => p.page_id === 'pool-b')?.lease_expires_in;
    };
    await until(
      async () => ((await left()) < 28.5 ? true : null),
      10_000,
      'the lease to run down below 28.5 s',
    );
    await page.evaluate(() => document.title);
    expect(await left()).toBeGreaterThan(29);
    // Only the leased page: the other pool page stays out of sight.
    expect((await client.pages()).map((p) => p.url())).not.toContain(`${site.url}/?pool=pool-a`);
  } finally {
    await client.disconnect();
  }
  // Disconnecting left the pool's page open and its lease with its holder.
  expect(await targetOf('pool=pool-b')).toBeTruthy();
  const released = await w.call<Body>('DELETE', '/api/v1/ops/pool-b/lease', { lease: token });
  expect(released.status).toBe(200);
});

test('two clients do not see each other, and what a client opened closes when it leaves', async () => {
  const a = await connect();
  const b = await connect();
  try {
    const pa = await a.newPage();
    await pa.goto(`${site.url}/?client=a`, { waitUntil: 'load' });
    const pb = await b.newPage();
    await pb.goto(`${site.url}/?client=b`, { waitUntil: 'load' });
    expect((await a.pages()).map((p) => p.url())).toEqual([`${site.url}/?client=a`]);
    expect((await b.pages()).map((p) => p.url())).toEqual([`${site.url}/?client=b`]);
    const session = await b.target().createCDPSession();
    await expect(
      session.send('Target.closeTarget', { targetId: await targetOf('client=a') }),
    ).rejects.toThrow(/not this connection's/);
  } finally {
    await a.disconnect();
  }
  await waitFor(
    'client a’s page to close',
    async () => !(await allPages()).some((t) => t.url.includes('client=a')),
  );
  expect((await allPages()).some((t) => t.url.includes('client=b'))).toBe(true);
  await b.disconnect();
  await waitFor(
    'client b’s page to close',
    async () => !(await allPages()).some((t) => t.url.includes('client=b')),
  );
  // The pool is as it was.
  const status = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  expect((status.body.pages as Body[]).map((p) => p.page_id).sort()).toEqual(['pool-a', 'pool-b']);
});

test('pages the worker makes while a client is connected are made as fast, and stay out of its sight', async () => {
  const timed = async (id: string): Promise<number> => {
    const started = performance.now();
    const r = await w.call<Body>('POST', '/api/v1/ops/create-page', { body: { page_id: id } });
    expect(r.status).toBe(200);
    return performance.now() - started;
  };
  const alone = await timed('made-alone');
  const client = await connect();
  try {
    const beside = await timed('made-beside');
    // The client's discovery and auto-attach hold nothing up for long (a paused target waits).
    expect(beside).toBeLessThan(alone + 1_000);
    const nav = await w.call<Body>('POST', '/api/v1/ops/made-beside/navigate', {
      body: { url: `${site.url}/?made=beside` },
    });
    expect(nav.status).toBe(200);
    expect((await client.pages()).map((p) => p.url())).toEqual([]);
  } finally {
    await client.disconnect();
    for (const id of ['made-alone', 'made-beside']) {
      await w.call('POST', `/api/v1/ops/${id}/destroy-page`);
    }
  }
});

test("Playwright's connectOverCDP drives a page of its own there too, and leaves none behind", async () => {
  const cookie = `p${Date.now()}`;
  await w.call('POST', '/api/v1/ops/pool-a/navigate', {
    body: { url: `${site.url}/cookie?v=${cookie}` },
  });
  // Discovery as Playwright does it: the HTTP address, /json/version, then the WebSocket.
  const browser = await chromium.connectOverCDP(w.url, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  const [context] = browser.contexts();
  if (!context) throw new Error('no default context');
  expect(context.pages()).toEqual([]);
  const page = await context.newPage();
  await page.goto(`${site.url}/cookie?client=playwright`);
  expect(await page.title()).toBe(`cookies:persona=${cookie}`);
  expect(await page.evaluate(() => document.querySelector('p')?.textContent)).toBe('cookie');
  expect((await page.screenshot()).subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(context.pages().map((p) => p.url())).toEqual([`${site.url}/cookie?client=playwright`]);
  // Its close ends the connection (the persona's browser is not the client's to close).
  await browser.close();
  await waitFor(
    'the Playwright client’s page to close',
    async () => !(await allPages()).some((t) => t.url.includes('client=playwright')),
  );
  const status = await w.call<Body>('GET', '/api/v1/system/status');
  expect(status.body.initialized).toBe(true);
});

test('Playwright with a lease token drives that pool page, and only that one', async () => {
  const lease = await w.call<Body>('POST', '/api/v1/ops/pool-b/lease', { body: { ttl: 30 } });
  const token = lease.body.lease_token as string;
  const browser = await chromium.connectOverCDP(w.url, {
    headers: { authorization: `Bearer ${KEY}`, 'x-lease': token },
  });
  try {
    const [context] = browser.contexts();
    if (!context) throw new Error('no default context');
    const pages = context.pages();
    expect(pages.map((p) => p.url())).toEqual([`${site.url}/?pool=pool-b`]);
    const [page] = pages;
    if (!page) throw new Error('no page');
    expect(await page.evaluate(() => document.title)).toBe('Fixture home');
    await page.goto(`${site.url}/second?by=playwright`);
    expect(await page.locator('#second').textContent()).toBe('second');
    // The pool sees the page where the client took it; a call without the token meets the lease.
    const refused = await w.call<Body>('POST', '/api/v1/ops/pool-b/extract-content');
    expect(refused.status).toBe(423);
    const withToken = await w.call<Body>('POST', '/api/v1/ops/pool-b/extract-content', {
      lease: token,
    });
    expect(withToken.body.url).toBe(`${site.url}/second?by=playwright`);
  } finally {
    await browser.close();
  }
  // Closing the connection left the pool's page open, with its lease.
  expect(await targetOf('by=playwright')).toBeTruthy();
  await w.call('POST', '/api/v1/ops/pool-b/navigate', {
    body: { url: `${site.url}/?pool=pool-b` },
    lease: token,
  });
  await w.call<Body>('DELETE', '/api/v1/ops/pool-b/lease', { lease: token });
});

/** Waits up to 10 s for `check` to hold; the failure names `what` it waited for. */
const waitFor = (what: string, check: () => Promise<boolean>): Promise<true> =>
  until(async () => ((await check()) ? true : null), 10_000, what);

describe('a persona that tells Windows in German (BROWSER_PLATFORM, BROWSER_LOCALE)', () => {
  let win: RunningWorker;
  let winEye: Observer;
  beforeAll(async () => {
    win = await startWorker({
      env: { DEVTOOLS_PORT: '0', BROWSER_PLATFORM: 'windows', BROWSER_LOCALE: 'de-DE' },
    });
    await win.waitInitialized();
    await win.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'own' } });
    await win.call('POST', '/api/v1/ops/own/navigate', { body: { url: `${site.url}/?pool=own` } });
    winEye = await Observer.attach(win);
  });
  afterAll(async () => {
    await winEye?.detach();
    await win?.stop();
  });

  const TELLS = `(async () => ({
    ua: navigator.userAgent,
    platform: navigator.platform,
    hint: navigator.userAgentData ? navigator.userAgentData.platform : null,
    locale: Intl.DateTimeFormat().resolvedOptions().locale,
  }))()`;

  test("a client's page tells what the pool's pages tell, from its first script on", async () => {
    const pool = await winEye.read<Record<string, string>>('pool=own', TELLS);
    expect(pool.platform).toBe('Win32');
    expect(pool.locale).toBe('de-DE');
    const endpoint = (await win.call<Body>('GET', '/json/version')).body;
    expect(endpoint['User-Agent']).toBe(pool.ua);
    const client = await puppeteer.connect({
      browserWSEndpoint: endpoint.webSocketDebuggerUrl as string,
      headers: { authorization: `Bearer ${KEY}` },
      defaultViewport: null,
    });
    try {
      const page = await client.newPage();
      // Read by the page's own first script, before any command of the client's could run.
      await page.goto(`${site.url}/tells`, { waitUntil: 'load' });
      expect(await page.evaluate('window.tells')).toEqual(pool);
    } finally {
      await client.disconnect();
    }
  });
});
