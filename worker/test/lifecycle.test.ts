import fs from 'node:fs';
import path from 'node:path';
import { startXvfb } from '@persona-browser/xvfb';
import { startFixture } from '@persona-browser/testkit/fixture';
import { useSite } from '@persona-browser/testkit/site-worker';
import { Observer } from '@persona-browser/testkit/observer';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { alive, browserPids, startWorker, xvfbPid } from '@persona-browser/testkit/worker';
import { cmdlineOf } from '@persona-browser/testkit/procs';

type Body = Record<string, any>;
const file = useSite(startFixture);

describe('navigator states', () => {
  let w: RunningWorker;
  beforeAll(async () => {
    // DevTools on a port too: the tests play a person at the screen through it.
    w = await startWorker({ env: { DEVTOOLS_PORT: '0' } });
    await w.waitInitialized();
  });
  afterAll(async () => {
    await w?.stop();
  });
  // Each test begins with a running browser and an empty pool, whatever the one before it left
  // (the window's last tab is the test's own only then).
  beforeEach(async () => {
    const s = await w.call<Body>('GET', '/api/v1/system/status', { auth: false });
    if (!s.body.initialized || s.body.page_count !== 0) {
      expect((await w.call<Body>('GET', '/api/v1/system/start')).body.success).toBe(true);
    }
  });

  test('stop closes the browser and every page; the server keeps answering; start brings a fresh pool', async () => {
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'p' } });
    await w.call('POST', '/api/v1/ops/p/navigate', {
      body: { url: `${file.site.url}/remember?v=kept` },
    });
    expect(browserPids(w).length).toBeGreaterThan(0);
    const stop = await w.call<Body>('GET', '/api/v1/system/stop');
    expect(stop.body).toMatchObject({ success: true, page_id: null });
    expect(browserPids(w)).toEqual([]);
    expect(alive(xvfbPid(w))).toBe(true);
    const status = await w.call<Body>('GET', '/api/v1/system/status', { auth: false });
    expect(status.body).toEqual({
      initialized: false,
      browser_context_active: false,
      page_pool_active: false,
      max_pages: 5,
      slowmo: 0,
      // What the persona's settings give away (a UTC server's zone): system.test.ts checks them.
      warnings: expect.any(Array),
      page_count: 0,
      available_pages: 0,
    });
    const pages = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
    expect(pages.status).toBe(500);
    expect(pages.body).toEqual({
      success: false,
      error: expect.stringMatching(/not initialized/),
      page_id: null,
    });
    const create = await w.call<Body>('POST', '/api/v1/ops/create-page', { body: {} });
    expect(create.status).toBe(500);

    const start = await w.call<Body>('GET', '/api/v1/system/start');
    expect(start.body).toEqual({ success: true, page_id: null, message: expect.any(String) });
    const up = await w.call<Body>('GET', '/api/v1/system/status', { auth: false });
    expect(up.body).toMatchObject({ initialized: true, page_count: 0 });
    // The profile is persistent: what the site stored before the restart is still there.
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'p' } });
    await w.call('POST', '/api/v1/ops/p/navigate', { body: { url: `${file.site.url}/remember` } });
    const content = await w.call<Body>('POST', '/api/v1/ops/p/extract-content');
    expect(content.body.title).toBe('stored:kept');
  });

  test('a cookie set the moment before a stop is there after the start, every time', async () => {
    // The browser writes its cookies to the profile as it closes: a stop that ends the browser
    // before it has written them loses what the site set last (a persona's login, kept in light
    // sleep). Two rounds, each stopping right after the cookie is set.
    const title = async (): Promise<unknown> =>
      (await w.call<Body>('POST', '/api/v1/ops/c/extract-content')).body.title;
    for (let round = 1; round <= 2; round++) {
      const value = `round${round}`;
      await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'c' } });
      await w.call('POST', '/api/v1/ops/c/navigate', {
        body: { url: `${file.site.url}/cookie?v=${value}` },
      });
      expect(await title()).toBe(`cookies:persona=${value}`);
      expect((await w.call<Body>('GET', '/api/v1/system/stop')).body.success).toBe(true);
      expect((await w.call<Body>('GET', '/api/v1/system/start')).body.success).toBe(true);
      await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'c' } });
      await w.call('POST', '/api/v1/ops/c/navigate', { body: { url: `${file.site.url}/cookie` } });
      expect({ round, title: await title() }).toEqual({ round, title: `cookies:persona=${value}` });
    }
  });

  test('a browser that does not close is killed with its helpers after 15 s, and the stop answers', async () => {
    const pids = browserPids(w);
    // Its main process: the one without a --type= (zygotes, renderers have one).
    const main = pids.find((pid) => !cmdlineOf(pid).includes('--type='));
    if (main === undefined) throw new Error(`no main browser process among ${pids.join(', ')}`);
    // Frozen, it never answers the close: only the deadline ends it.
    process.kill(main, 'SIGSTOP');
    const asked = Date.now();
    const stop = await w.call<Body>('GET', '/api/v1/system/stop');
    // Time itself is what is tested here: the stop waits out its deadline, no less.
    const took = Date.now() - asked;
    expect({ success: stop.body.success, waited: took >= 15_000, left: browserPids(w) }).toEqual({
      success: true,
      waited: true,
      left: [],
    });
    expect(w.logs.filter((l) => l.includes('the browser did not close within 15 s'))).toHaveLength(
      1,
    );
    expect((await w.call<Body>('GET', '/api/v1/system/start')).body.success).toBe(true);
  });

  test('start while running restarts: old pages and old browser processes are gone', async () => {
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'old' } });
    const before = browserPids(w);
    expect(
      (await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false })).body.total_pages,
    ).toBe(1);
    await w.call('GET', '/api/v1/system/start');
    const after = browserPids(w);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((p) => before.includes(p))).toEqual([]);
    expect(
      (await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false })).body.total_pages,
    ).toBe(0);
  });

  test('a tab closed by hand leaves the pool, and its lease with it', async () => {
    // Not the window's last tab: that one takes the browser with it (the test after this one).
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'stays' } });
    const browser = browserPids(w);
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'byhand' } });
    await w.call('POST', '/api/v1/ops/byhand/navigate', {
      body: { url: `${file.site.url}/second?byhand` },
    });
    await w.call('POST', '/api/v1/ops/byhand/lease');
    // A person at the screen: another client of the same browser closes the tab.
    const person = await Observer.attach(w);
    await (await person.page('?byhand')).close();
    await person.detach();
    const until = Date.now() + 5_000;
    let ids: string[] = ['byhand'];
    while (Date.now() < until && ids.includes('byhand')) {
      const pool = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
      ids = (pool.body.pages as Body[]).map((p) => p.page_id as string);
    }
    expect(ids).not.toContain('byhand');
    const again = await w.call<Body>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'byhand' },
    });
    expect(again.status).toBe(200);
    expect((await w.call('POST', '/api/v1/ops/byhand/extract-content')).status).toBe(200);
    await w.call('DELETE', '/api/v1/ops/byhand/destroy-page');
    await w.call('DELETE', '/api/v1/ops/stays/destroy-page');
    expect(browserPids(w)).toEqual(expect.arrayContaining([Math.min(...browser)]));
  });

  /** Waits up to 20 s for the worker to say initialized with browser processes not in `before`. */
  async function browserBack(before: number[]): Promise<{ status: Body; fresh: number[] }> {
    const until = Date.now() + 20_000;
    let status: Body = {};
    let fresh: number[] = [];
    while (Date.now() < until) {
      status = (await w.call<Body>('GET', '/api/v1/system/status', { auth: false })).body;
      fresh = browserPids(w).filter((p) => !before.includes(p));
      if (status.initialized && fresh.length > 0) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    return { status, fresh };
  }

  test('the window’s last tab closed by hand ends the browser as it would anyone’s; it comes back by itself', async () => {
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'last' } });
    await w.call('POST', '/api/v1/ops/last/navigate', {
      body: { url: `${file.site.url}/second?last` },
    });
    const before = browserPids(w);
    const person = await Observer.attach(w);
    await (await person.page('?last')).close();
    await person.detach().catch(() => undefined);
    const { status, fresh } = await browserBack(before);
    expect(status).toMatchObject({ initialized: true, page_count: 0 });
    expect(fresh.length).toBeGreaterThan(0);
    expect(
      (await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'last' } })).status,
    ).toBe(200);
    await w.call('POST', '/api/v1/ops/last/navigate', {
      body: { url: `${file.site.url}/second?back` },
    });
    const content = await w.call<Body>('POST', '/api/v1/ops/last/extract-content');
    expect(content.body.title).toBe('Second page');
    await w.call('DELETE', '/api/v1/ops/last/destroy-page');
  });

  test('a browser killed from outside comes back by itself', async () => {
    const before = browserPids(w);
    // The browser's main process is the one without a --type= (zygotes, renderers have one).
    const main = before.find(
      (pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type='),
    );
    process.kill(main as number, 'SIGKILL');
    const { status, fresh } = await browserBack(before);
    expect({ fresh: fresh.length > 0, logs: fresh.length > 0 ? [] : w.logs.slice(-10) }).toEqual({
      fresh: true,
      logs: [],
    });
    expect(status).toMatchObject({ initialized: true, page_count: 0 });
    const created = await w.call<Body>('POST', '/api/v1/ops/create-page', {
      body: { page_id: 'again' },
    });
    expect(created.status).toBe(200);
  });
});

describe('no orphan processes', () => {
  test('kill answers, then the worker exits and leaves no Chromium or Xvfb behind', async () => {
    const w = await startWorker();
    await w.waitInitialized();
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'x' } });
    const pids = [...browserPids(w), xvfbPid(w)];
    expect(pids.length).toBeGreaterThan(2);
    const r = await w.call<Body>('GET', '/api/v1/system/kill');
    expect(r.body).toMatchObject({ success: true, page_id: null });
    expect(await w.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  });

  test('SIGTERM does the same', async () => {
    const w = await startWorker();
    await w.waitInitialized();
    const pids = [...browserPids(w), xvfbPid(w)];
    w.proc.kill('SIGTERM');
    expect(await w.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe('browser and display set-up', () => {
  test('a stale profile lock from another machine does not stop the browser', async () => {
    const w0 = await startWorker();
    await w0.waitInitialized();
    await w0.call('GET', '/api/v1/system/stop');
    const profile = w0.profileDir;
    fs.rmSync(path.join(profile, 'SingletonLock'), { force: true });
    fs.symlinkSync('another-host-4242', path.join(profile, 'SingletonLock'));
    const start = await w0.call<Body>('GET', '/api/v1/system/start');
    expect(start.body.success).toBe(true);
    await w0.stop();
  });

  test('with DISPLAY set the worker uses it and starts no display of its own', async () => {
    const display = await startXvfb();
    try {
      const w = await startWorker({ env: { DISPLAY: display.display } });
      await w.waitInitialized();
      expect(w.logs.some((l) => l.includes('virtual display started'))).toBe(false);
      // The browser process itself: the only one without a `--type=` (pids may wrap around).
      const main = browserPids(w).find(
        (pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type='),
      );
      if (main === undefined) throw new Error("no browser process among the worker's");
      const environ = fs.readFileSync(`/proc/${main}/environ`, 'utf8').split('\0');
      expect(environ).toContain(`DISPLAY=${display.display}`);
      await w.stop();
    } finally {
      await display.stop();
    }
  });

  test('no browser binary: start-up stops with one clear line naming the fix', async () => {
    const w = startWorker({ env: { CHROME_PATH: '/nonexistent/chrome' } });
    await expect(w).rejects.toThrow(/CHROME_PATH=\/nonexistent\/chrome does not exist/);
  });

  test('a bad configuration value stops start-up with a line naming the variable', async () => {
    await expect(startWorker({ env: { PORT: 'abc' } })).rejects.toThrow(
      /worker exited with 2[\s\S]*invalid PORT/,
    );
    await expect(startWorker({ env: { BROWSER_SLOWMO: '-5' } })).rejects.toThrow(
      /invalid BROWSER_SLOWMO/,
    );
    await expect(startWorker({ env: { WAKER_URL: 'not a url' } })).rejects.toThrow(
      /invalid WAKER_URL/,
    );
  });

  test('persona.env values apply on top of .env', async () => {
    const w = await startWorker({
      persona: 'bob',
      personaEnv: 'BROWSER_SLOWMO=333\n',
      env: { BROWSER_SLOWMO: undefined },
    });
    const status = await w.call<Body>('GET', '/api/v1/system/status', { auth: false });
    expect(status.body.slowmo).toBe(333);
    await w.stop();
  });
});

describe('BROWSER_SLOWMO', () => {
  test('is a pause after actions that reading calls do not pay', async () => {
    const slowmo = 1500;
    const w = await startWorker({ env: { BROWSER_SLOWMO: String(slowmo) } });
    await w.waitInitialized();
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 's' } });
    const nav = await w.call<Body>('POST', '/api/v1/ops/s/navigate', {
      body: { url: `${file.site.url}/` },
    });
    expect(nav.body.success).toBe(true);
    const reads = [
      await w.call('POST', '/api/v1/ops/s/extract-content'),
      await w.call('GET', '/api/v1/ops/s/screenshot'),
      await w.call('GET', '/api/v1/system/status', { auth: false }),
      await w.call('GET', '/api/v1/system/status/pages', { auth: false }),
    ];
    for (const r of reads) expect(r.status).toBe(200);
    // The navigation paid the ~2 s pre-delay plus the slowmo; no read paid the slowmo.
    expect(nav.ms).toBeGreaterThan(1800 + slowmo);
    expect(Math.max(...reads.map((r) => r.ms))).toBeLessThan(slowmo);
    await w.stop();
  });
});
