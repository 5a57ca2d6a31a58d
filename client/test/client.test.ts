import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';
import type { PersonaClient, Result } from '../src';
import { createPersonaClient } from '../src';

/**
 * The typed client against a real worker (headed Chromium under its own Xvfb) and the fixture
 * site: one call or more per layer (system, ops, primitive, plugin), the lease that renews and
 * releases itself, the 409 wait, and `success: false` as a value.
 */

const ROOT = path.join(__dirname, '..', '..');

let site: Fixture;
let w: RunningWorker;
let pb: PersonaClient;

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker({
    env: {
      // A busy page answers 409 after 1 s instead of 30: the busy wait's test stays short.
      LOCK_WAIT_SECONDS: '1',
      // misc/news-search runs against the fixture site (a URL of it is opened as it is).
      NEWS_BASE_URL: site.url,
      // For the observer, which reads what the input page received (DevToolsActivePort).
      DEVTOOLS_PORT: '0',
    },
  });
  await w.waitInitialized();
  pb = createPersonaClient({ baseUrl: w.url, key: KEY });
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

/** A success's data; a failure fails the test with the whole failure in the message. */
function dataOf<D>(r: Result<D>): D {
  if (!r.ok) throw new Error(`expected a success, got ${JSON.stringify(r)}`);
  return r.data;
}

async function createPage(pageId: string): Promise<void> {
  const r = await pb.result(pb.POST('/api/v1/ops/create-page', { body: { page_id: pageId } }));
  expect(r).toMatchObject({ ok: true, data: { page_id: pageId } });
}

const extract = (pageId: string) =>
  pb.POST('/api/v1/ops/{page_id}/extract-content', { params: { path: { page_id: pageId } } });

describe('system', () => {
  test('status reads the navigator; a wrong key is a typed 401, not an exception', async () => {
    const status = dataOf(await pb.result(pb.GET('/api/v1/system/status')));
    expect(status).toMatchObject({ initialized: true, max_pages: 5 });

    const stranger = createPersonaClient({ baseUrl: w.url, key: 'not-the-key' });
    const refused = await stranger.result(stranger.GET('/api/v1/system/start'));
    expect(refused).toEqual({
      ok: false,
      status: 401,
      error: 'Invalid API key',
      page_id: null,
      body: { detail: 'Invalid API key' },
    });
  });

  test('start (with the key) restarts the browser: pages made before are gone', async () => {
    await createPage('before-start');
    const started = await pb.result(pb.GET('/api/v1/system/start'));
    expect(started).toMatchObject({ ok: true, status: 200, data: { success: true } });
    await w.waitInitialized();
    const pool = dataOf(await pb.result(pb.GET('/api/v1/system/status/pages')));
    expect(pool.pages.map((p) => p.page_id)).not.toContain('before-start');
  });

  test('the document the generator builds is the one the worker serves', async () => {
    const served = await (await fetch(`${w.url}/openapi.json`)).json();
    const built: unknown = JSON.parse(
      execFileSync(process.execPath, ['scripts/generate-client.cjs', '--print-document'], {
        cwd: ROOT,
        encoding: 'utf8',
      }),
    );
    expect(built).toEqual(served);
  });
});

describe('ops', () => {
  // The page shows the fixture's home whichever of these tests comes first.
  beforeAll(async () => {
    await createPage('ops');
    const nav = await pb.result(
      pb.POST('/api/v1/ops/{page_id}/navigate', {
        params: { path: { page_id: 'ops' } },
        body: { url: `${site.url}/` },
      }),
    );
    expect(nav).toMatchObject({ ok: true });
  });

  test('navigate to the fixture, then extract-content holds its text', async () => {
    const nav = await pb.result(
      pb.POST('/api/v1/ops/{page_id}/navigate', {
        params: { path: { page_id: 'ops' } },
        body: { url: `${site.url}/` },
      }),
    );
    expect(nav).toMatchObject({ ok: true, data: { status_code: 200, final_url: `${site.url}/` } });
    expect(site.seen).toContain('GET /');
    const content = dataOf(await pb.result(extract('ops')));
    expect(content.title).toBe('Fixture home');
    expect(content.content).toContain('<h1 id="greeting">Hello from the fixture</h1>');
  });

  test('API failures are values: an unknown page (404), a duplicate id (400)', async () => {
    const missing = await pb.result(extract('no-such-page'));
    expect(missing).toMatchObject({ ok: false, status: 404, error: 'Page not found' });
    const twice = await pb.result(pb.POST('/api/v1/ops/create-page', { body: { page_id: 'ops' } }));
    expect(twice).toMatchObject({ ok: false, status: 400, error: expect.stringMatching(/ops/) });
  });

  test('a lease renews itself past its ttl; others get a typed 423; leaving the scope releases it', async () => {
    const ttl = 1.5;
    const other = () => pb.result(extract('ops'));
    let renewed: number;
    {
      const taken = await pb.lease('ops', { ttl });
      if (!taken.ok) throw new Error(taken.error);
      await using lease = taken.data;
      // Three ttls with no call of ours: only the renewals keep the page ours.
      // Time itself is tested: the renewals over three ttls.
      await sleep(ttl * 3000);
      expect(await other()).toMatchObject({
        ok: false,
        status: 423,
        error: expect.stringMatching(/leased/),
        page_id: 'ops',
      });
      const mine = await lease.api.POST('/api/v1/ops/{page_id}/extract-content', {
        params: { path: { page_id: 'ops' } },
      });
      expect(mine.data?.title).toBe('Fixture home');
      renewed = lease.renewals;
      expect(lease.lost).toBeNull();
    }
    expect(renewed).toBeGreaterThanOrEqual(3);
    // Released on leaving the block: the page is free at once, and a new lease is granted.
    expect(await other()).toMatchObject({ ok: true });
    const again = await pb.withLease('ops', async (lease) => lease.token);
    expect(again).toMatchObject({ ok: true, data: expect.stringMatching(/^[0-9a-f]+$/) });
    // withLease released it too.
    expect(await other()).toMatchObject({ ok: true });
  }, 30_000);

  test('control: a lease that nobody renews lapses after its ttl', async () => {
    const asked = Date.now();
    const plain = await pb.result(
      pb.POST('/api/v1/ops/{page_id}/lease', {
        params: { path: { page_id: 'ops' } },
        body: { ttl: 1.5 },
      }),
    );
    expect(plain).toMatchObject({ ok: true });
    expect(await pb.result(extract('ops'))).toMatchObject({ ok: false, status: 423 });
    // Until another call is served again: not before the ttl has run out.
    await until(
      async () => ((await pb.result(extract('ops'))).ok ? true : null),
      15_000,
      'the unrenewed lease on ops to lapse (a call served again)',
    );
    expect(Date.now() - asked).toBeGreaterThanOrEqual(1_450);
  });
});

describe('primitive', () => {
  test('type-text: the fixture input holds exactly the text, from trusted key presses', async () => {
    await createPage('prim');
    const page = { params: { path: { page_id: 'prim' } } };
    const nav = await pb.result(
      pb.POST('/api/v1/ops/{page_id}/navigate', { ...page, body: { url: `${site.url}/input` } }),
    );
    expect(nav.ok).toBe(true);
    const click = await pb.result(
      pb.POST('/api/v1/primitive/{page_id}/click-element', {
        ...page,
        body: { selector: '#name' },
      }),
    );
    expect(click).toMatchObject({ ok: true, data: { selector: '#name' } });
    const text = 'Typed through the client';
    const typed = dataOf(
      await pb.result(
        pb.POST('/api/v1/primitive/{page_id}/type-text', { ...page, body: { text } }),
      ),
    );
    expect(typed.text_length).toBe(text.length);
    // What the page received, read by a DevTools client of its own (not through the API).
    const eye = await Observer.attach(w);
    try {
      const read = <T>(expr: string): Promise<T> => eye.read<T>('/input', expr);
      expect(await read<string>("document.getElementById('name').value")).toBe(text);
      const keys = await read<Array<{ key: string; trusted: boolean }>>('__log.keys');
      expect(keys.filter((k) => k.key !== 'Shift').length).toBe(typed.chars_typed);
      expect(keys.every((k) => k.trusted)).toBe(true);
    } finally {
      await eye.detach();
    }
  }, 60_000);
});

describe('plugin', () => {
  beforeAll(() => createPage('plug'));
  const news = (query: string) =>
    pb.result(
      pb.POST('/api/v1/{page_id}/plugin/misc/news-search', {
        params: { path: { page_id: 'plug' } },
        body: { query },
      }),
    );

  test('misc/news-search opens a URL of its site: the page is there afterwards', async () => {
    const url = `${site.url}/second`;
    const r = await news(url);
    expect(r).toMatchObject({
      ok: true,
      data: { method: 'direct_url', url, page_url: url, message: 'Opened "Second page"' },
    });
    expect(site.seen).toContain('GET /second');
    const content = dataOf(await pb.result(extract('plug')));
    expect(content.content).toContain('<p id="second">second</p>');
  });

  test('a plugin that finds the wrong site answers success: false, a typed failure with status 200', async () => {
    const r = await news('https://elsewhere.example/story');
    expect(r).toMatchObject({
      ok: false,
      status: 200,
      page_id: 'plug',
      error: expect.stringContaining('https://elsewhere.example/story'),
    });
    // Its parameters are checked before the page is touched: a 400 with the plugin's message.
    const bad = await pb.result(
      pb.POST('/api/v1/{page_id}/plugin/misc/news-search', {
        params: { path: { page_id: 'plug' } },
        body: { query: 'x', paste_probability: 2 },
      }),
    );
    expect(bad).toMatchObject({ ok: false, status: 400, error: expect.stringMatching(/paste/) });
  });
});

describe('the 409 wait', () => {
  test('while a long call holds the page, the wait retries until it is free; without time left it gives the 409 back', async () => {
    await createPage('busy');
    const page = { params: { path: { page_id: 'busy' } } };
    let navigated = false;
    // A navigation of a few seconds: the 2 s pause, then a page that answers after 1.5 s.
    const long = pb
      .result(
        pb.POST('/api/v1/ops/{page_id}/navigate', {
          ...page,
          body: { url: `${site.url}/slow?ms=1500` },
        }),
      )
      .then((r) => {
        navigated = true;
        return r;
      });
    // Until the pool reports the navigation running on the page.
    for (;;) {
      const pool = dataOf(await pb.result(pb.GET('/api/v1/system/status/pages')));
      if (pool.pages.find((p) => p.page_id === 'busy')?.current_operation) break;
      await sleep(50);
    }
    // No time to wait: the worker's own 409 comes back as a value, after one attempt.
    const busyAnswers: number[] = [];
    const gaveUp = await pb.untilFree(() => extract('busy'), {
      until: Date.now(),
      onBusy: (n) => busyAnswers.push(n),
    });
    expect(gaveUp).toMatchObject({ ok: false, status: 409, page_id: 'busy' });
    expect(navigated).toBe(false);
    expect(busyAnswers).toEqual([]);
    // With time to wait: 409s, pauses, and then the page as the long call left it.
    const waited = dataOf(
      await pb.untilFree(() => extract('busy'), {
        until: Date.now() + 60_000,
        onBusy: (n) => busyAnswers.push(n),
      }),
    );
    expect(busyAnswers.length).toBeGreaterThanOrEqual(1);
    expect(waited.content).toContain('after 1500 ms');
    expect((await long).ok).toBe(true);
  }, 60_000);
});
