import http from 'node:http';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import { readLogRows } from '@persona-browser/testkit/request-log-file';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, startWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';

/**
 * Calling plugins through the routes generated for them: validation before the page is
 * touched, GET parameters, the page's lease gate, human input that the page sees, settings and
 * secrets, the answers of a plugin that fails, throws or overruns its deadline, and the log.
 */
const probability = { name: 'paste_probability', type: 'number', min: 0, max: 1, default: 0.9 };

const root = writePluginTree(
  [
    {
      name: 'demo/visit',
      manifest: manifest(
        [
          { name: 'url', type: 'url', required: true },
          probability,
          { name: 'text', type: 'text', default: 'hello there' },
          { name: 'over', type: 'text' },
        ],
        { response: { typed: 'string', input: 'string', final_url: 'string' } },
      ),
      js: `module.exports.default = sdk.definePlugin({
        async run(ctx, p) {
          const nav = await ctx.page.goto(p.url);
          await ctx.gestures.click('#name');
          // Text already in the field, selected, is replaced by what comes next.
          if (p.over) { await ctx.gestures.type(p.over); await ctx.gestures.selectAll(); }
          const input = ctx.chance(p.paste_probability) ? 'paste' : 'type';
          await ctx.gestures[input](p.text);
          return { typed: await ctx.page.value('#name'), input, final_url: nav.final_url };
        },
      });`,
    },
    {
      name: 'demo/inspect',
      manifest: manifest(
        [
          { name: 'count', type: 'number' },
          { name: 'flag', type: 'checkbox', default: false },
          { name: 'word', type: 'text', default: 'none' },
        ],
        { methods: ['GET', 'POST'] },
      ),
      js: `module.exports.default = { async run(ctx, p) {
        ctx.log.info('using the token', { token: ctx.secret('DEMO_TOKEN') });
        return { count: p.count, flag: p.flag, word: p.word, base: ctx.setting('DEMO_BASE_URL'),
          has_secret: Boolean(ctx.secret('DEMO_TOKEN')), draw: ctx.random() };
      } };`,
    },
    {
      name: 'demo/read',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        const since = await ctx.network.mark();
        await ctx.page.goto(ctx.setting('DEMO_BASE_URL') + '/');
        const p = ctx.page;
        return {
          title: await p.title(), text: await p.text('#greeting'), texts: await p.texts('h1, a'),
          href: await p.attr('a', 'href'), hrefs: await p.attrs('a', 'href'),
          has: await p.exists('#greeting'), missing: await p.exists('#nope'),
          which: await p.waitForAny({ none: '#nope', greeting: '#greeting' }, 2000),
          html: (await p.content()).includes('Hello from the fixture'),
          // Once the bodies are in: a line whose body is still being read is not listed yet.
          settled: await ctx.network.settled(),
          lines: (await ctx.network.http({ since, resource_type: 'document' }))
            .map((l) => l.kind + ' ' + l.url).sort(),
          blacklist: ctx.network.blacklist(),
        };
      } };`,
    },
    {
      name: 'demo/pair',
      manifest: manifest([
        { name: 'low', type: 'number', required: true },
        { name: 'high', type: 'number', required: true },
      ]),
      js: `module.exports.default = {
        validate: (p) => (p.low < p.high ? null : 'low must be below high'),
        async run(ctx) { await ctx.page.goto('about:blank'); return {}; },
      };`,
    },
    {
      name: 'demo/slow',
      manifest: manifest([], { timeout_s: 2 }),
      js: 'module.exports.default = { async run(ctx) { for (;;) await ctx.sleep(300); } };',
    },
    {
      name: 'demo/throws',
      manifest: manifest([]),
      js: `module.exports.default = { async run() { null.prop; } };`,
    },
    {
      name: 'demo/site',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        throw new sdk.SiteError('the search form', 'a page titled "' + (await ctx.page.title()) + '"',
          { state: 'unknown', hint: 'demo/visit opens the search form', success: true, page_id: 'x' });
      } };`,
    },
    {
      name: 'demo/refuse',
      manifest: manifest([], { response: { shortcode: 'string' } }),
      js: `module.exports.default = { async run() {
        return { success: false, error: 'shortcode_not_in_view', shortcode: 'C0de' };
      } };`,
    },
    {
      name: 'demo/fetch',
      manifest: manifest([
        { name: 'url', type: 'text', required: true },
        { name: 'max', type: 'number' },
      ]),
      js: `module.exports.default = { async run(ctx, p) {
        const f = await ctx.page.fetchFile(p.url, p.max);
        return { status: f.status, type: f.content_type, size: f.bytes.length,
          text: new TextDecoder().decode(f.bytes) };
      } };`,
    },
    {
      name: 'demo/settle',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        await ctx.page.goto(ctx.setting('DEMO_BASE_URL') + '/');
        // Straight after the load the document's body may still be being read.
        const settled = await ctx.network.settled();
        const lines = await ctx.network.http({ resource_type: 'document', include_body: true });
        return { settled,
          body: lines.some((l) => (l.body || '').includes('Hello from the fixture')) };
      } };`,
    },
    {
      name: 'demo/settle-fetch',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        await ctx.page.goto(ctx.setting('DEMO_BASE_URL') + '/');
        // The page's fetch resolves on the headers; the body is still on its way.
        const status = await ctx.page.evaluate(() => fetch('/late-body?ms=400').then((r) => r.status));
        const settled = await ctx.network.settled();
        const lines = await ctx.network.http({ resource_type: 'fetch', include_body: true });
        return { status, settled,
          body: lines.some((l) => (l.body || '').includes('late body after 400 ms')) };
      } };`,
    },
    {
      name: 'demo/nosy',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) { return { key: ctx.setting('SERVICE_KEY') }; } };`,
    },
  ],
  {
    'demo/family.json': {
      settings: { DEMO_BASE_URL: { default: 'http://127.0.0.1:9/' } },
      secrets: ['DEMO_TOKEN'],
      blacklist: { site_setting: 'DEMO_BASE_URL', patterns: ['/second', '/tracker-\\d+/'] },
    },
  },
);

const SECRET = 'token-that-must-never-be-logged';
let w: RunningWorker;
let site: Fixture;
let observer: Observer;

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker({
    env: {
      PLUGINS_DIR: root,
      DEMO_BASE_URL: site.url,
      DEMO_TOKEN: SECRET,
      PLUGIN_SEED: '7',
      // DevTools on a port too: the test reads what the page saw through it.
      DEVTOOLS_PORT: '0',
    },
  });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'a' } });
  observer = await Observer.attach(w);
});
afterAll(async () => {
  await observer?.detach();
  await w?.stop();
  await site?.close();
});

/** A GET with a JSON body, which fetch refuses to send (docs/api.md lets GET plugins take one). */
function getWithBody(route: string, body: unknown): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(
      `${w.url}${route}`,
      {
        method: 'GET',
        headers: {
          authorization: `Bearer ${KEY}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve(JSON.parse(text) as Record<string, any>));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const run = (name: string, body?: unknown, lease?: string) =>
  w.call<Record<string, any>>('POST', `/api/v1/a/plugin/${name}`, { body, lease });

describe('a plugin call', () => {
  test('moves and types like a person: the page saw trusted clicks and keys', async () => {
    const r = await run('demo/visit', {
      url: `${site.url}/input`,
      paste_probability: 0,
      text: 'typed by hand',
    });
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      typed: 'typed by hand',
      input: 'type',
      final_url: `${site.url}/input`,
    });
    const log = await observer.read<any>('/input', 'window.__log');
    expect(log.clicks).toEqual([expect.objectContaining({ id: 'name', trusted: true })]);
    expect(log.moves.length).toBeGreaterThan(10);
    expect(log.keys.length).toBeGreaterThanOrEqual('typed by hand'.length);
    expect(log.keys.every((k: { trusted: boolean }) => k.trusted)).toBe(true);
    const pasted = await run('demo/visit', {
      url: `${site.url}/input`,
      paste_probability: 1,
      text: 'pasted',
    });
    expect(pasted.body).toMatchObject({ typed: 'pasted', input: 'paste' });
    const over = { url: `${site.url}/input`, paste_probability: 1, over: 'old', text: 'new' };
    expect((await run('demo/visit', over)).body).toMatchObject({ typed: 'new' });
  });

  test('is validated before the page is touched', async () => {
    const opened = await w.call('POST', '/api/v1/ops/a/navigate', {
      body: { url: `${site.url}/input` },
    });
    expect(opened.status).toBe(200);
    const before = site.seen.length;
    const bad = await run('demo/visit', { url: `${site.url}/input`, paste_probability: 1.5 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      success: false,
      error: 'paste_probability must be between 0.0 and 1.0',
      page_id: 'a',
    });
    expect((await run('demo/visit', { paste_probability: 0.5 })).body.error).toBe(
      'url is required',
    );
    const pair = await run('demo/pair', { low: 3, high: 1 });
    expect([pair.status, pair.body.error]).toEqual([400, 'low must be below high']);
    expect(site.seen.length).toBe(before);
    const status = await w.call<any>('GET', '/api/v1/system/status/pages');
    expect(status.body.pages[0].url).toBe(`${site.url}/input`);
  });

  test('GET reads the query string and a JSON body; the body wins', async () => {
    const get = (q: string) => w.call<any>('GET', `/api/v1/a/plugin/demo/inspect?${q}`);
    expect((await get('count=2.5&flag=yes&word=hi')).body).toMatchObject({
      count: 2.5,
      flag: true,
      word: 'hi',
    });
    expect((await get('flag=off')).body.flag).toBe(false);
    const both = await getWithBody('/api/v1/a/plugin/demo/inspect?flag=1&word=query', {
      word: 'body',
    });
    expect(both).toMatchObject({
      flag: true,
      word: 'body',
    });
    const bad = await get('count=two');
    expect([bad.status, bad.body.error]).toEqual([400, 'count must be a number']);
    const badFlag = await get('flag=perhaps');
    expect([badFlag.status, badFlag.body.error]).toEqual([400, 'flag must be true or false']);
  });

  test('reads its family’s settings and secrets; the secret never reaches the log', async () => {
    const r = await run('demo/inspect');
    expect(r.body).toMatchObject({ base: site.url, has_secret: true });
    expect(typeof r.body.draw).toBe('number');
    const line = w.logs.find((l) => l.includes('using the token'));
    expect(line).toBeDefined();
    expect(w.logs.join('\n')).not.toContain(SECRET);
    // A setting no family declares (the service key) is not the plugin's to read.
    const nosy = await run('demo/nosy');
    expect(nosy.status).toBe(500);
    expect(nosy.body.error).toMatch(/^Plugin demo\/nosy failed unexpectedly \(Error\)/);
    expect(JSON.stringify(nosy.body)).not.toContain('test-service-key');
  });

  test('reads the page and its capture through the SDK', async () => {
    const r = await run('demo/read');
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      title: 'Fixture home',
      text: 'Hello from the fixture',
      texts: ['Hello from the fixture', 'next'],
      href: `${site.url}/second`,
      hrefs: [`${site.url}/second`],
      has: true,
      missing: false,
      which: 'greeting',
      html: true,
      settled: true,
      // The load's navigation line and the document's response line, in either order.
      lines: [`navigation ${site.url}/`, `response ${site.url}/`],
      blacklist: ['/second', '/tracker-\\d+/'],
    });
  });

  test('loads a file through the browser: bytes, an HTTP error as a status, limits', async () => {
    const fetchFile = async (url: string, max?: number) =>
      (await run('demo/fetch', { url, max })).body;
    await w.call('POST', '/api/v1/ops/a/navigate', { body: { url: `${site.url}/` } });
    const before = site.seen.length;
    const home = await fetchFile(`${site.url}/second`);
    expect(home).toMatchObject({ success: true, status: 200, type: 'text/html' });
    expect(home.text).toContain('<p id="second">second</p>');
    expect(home.size).toBe(Buffer.byteLength(home.text));
    // The browser made the request, and the page's URL did not change.
    expect(site.seen.slice(before).filter((r) => r !== 'GET /favicon.ico')).toEqual([
      'GET /second',
    ]);
    const pages = await w.call<any>('GET', '/api/v1/system/status/pages');
    expect(pages.body.pages[0].url).toBe(`${site.url}/`);
    expect(await fetchFile(`${site.url}/missing`)).toMatchObject({ success: true, status: 404 });
    const big = await fetchFile(`${site.url}/tall`, 100);
    expect([big.success, big.error]).toEqual([
      false,
      `Cannot load ${site.url}/tall: larger than 100 bytes`,
    ]);
    expect((await fetchFile('javascript:alert(1)')).error).toBe(
      'Cannot load javascript:alert(1): only http and https addresses load',
    );
    expect((await fetchFile('http://127.0.0.1:9/gone')).error).toMatch(
      /^Cannot load http:\/\/127\.0\.0\.1:9\/gone: net::ERR_[A-Z_]+$/,
    );
  });

  test('waits until the capture has read the bodies of finished responses', async () => {
    const r = await run('demo/settle');
    expect(r.body).toMatchObject({ success: true, settled: true, body: true });
  });

  test('waits for a response the page has headers of but whose body is still coming', async () => {
    const r = await run('demo/settle-fetch');
    expect(r.body).toMatchObject({ success: true, status: 200, settled: true, body: true });
  });

  test('registers its family blacklist for the site of its base URL', async () => {
    // A plugin of the family that opened the site.
    expect((await run('demo/read')).status).toBe(200);
    const net = await w.call<any>('GET', '/api/v1/ops/a/network');
    expect(net.body.blacklist).toEqual(['/second', '/tracker-\\d+/']);
  });
});

describe('failures', () => {
  test('a site-level failure is 200 success:false saying what was expected and found', async () => {
    // demo/read leaves the fixture's home on the page.
    expect((await run('demo/read')).status).toBe(200);
    const r = await run('demo/site');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      error: 'Expected the search form, found a page titled "Fixture home"',
      page_id: 'a',
      // The error's details ride beside the envelope, which they never replace.
      state: 'unknown',
      hint: 'demo/visit opens the search form',
      // The failure bundle it left (plugin-bundles.test.ts).
      debug_id: expect.any(String),
    });
  });

  test('a plugin that answers success:false keeps its error code and its own fields', async () => {
    const r = await run('demo/refuse');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      error: 'shortcode_not_in_view',
      page_id: 'a',
      shortcode: 'C0de',
      debug_id: expect.any(String),
    });
  });

  test('a plugin that throws is a clear 500 envelope and the worker carries on', async () => {
    const r = await run('demo/throws');
    expect(r.status).toBe(500);
    expect(r.body).toEqual({
      success: false,
      error: 'Plugin demo/throws failed unexpectedly (TypeError); the worker log has the details',
      page_id: 'a',
      debug_id: expect.any(String),
    });
    expect(w.logs.some((l) => l.includes('"plugin failed"') && l.includes('demo/throws'))).toBe(
      true,
    );
    expect((await run('demo/inspect')).status).toBe(200);
  });

  test('a plugin past its deadline stops; the page is free again at once', async () => {
    const started = performance.now();
    const slow = run('demo/slow');
    // Passive reads answer while the plugin holds the page.
    const pool = await until(
      async () => {
        const p = await w.call<any>('GET', '/api/v1/system/status/pages');
        return p.body.pages[0]?.current_operation === 'demo/slow' ? p : null;
      },
      10_000,
      'the page to show demo/slow running',
    );
    expect(pool.body.pages[0]).toMatchObject({ state: 'busy', current_operation: 'demo/slow' });
    const net = await w.call('GET', '/api/v1/ops/a/network');
    expect(net.status).toBe(200);
    const r = await slow;
    const ms = performance.now() - started;
    expect(r.body).toEqual({
      success: false,
      error: 'demo/slow stopped at its deadline of 2 s',
      page_id: 'a',
      debug_id: expect.any(String),
    });
    // Bounded by its own timeout_s, far below the worker's call deadline of 120 s.
    expect(ms).toBeGreaterThanOrEqual(2000);
    expect(ms).toBeLessThan(20_000);
    const after = await run('demo/inspect');
    expect(after.status).toBe(200);
  });
});

describe('the page rules of ops and primitives', () => {
  test('auth, Page not found, and the lease gate with 423', async () => {
    const noAuth = await w.call('POST', '/api/v1/a/plugin/demo/inspect', { auth: false });
    expect([noAuth.status, noAuth.body]).toEqual([401, { detail: 'Invalid API key' }]);
    const missing = await w.call('POST', '/api/v1/nope/plugin/demo/inspect');
    expect([missing.status, missing.body]).toEqual([
      404,
      { success: false, error: 'Page not found', page_id: 'nope' },
    ]);
    const lease = await w.call<any>('POST', '/api/v1/ops/a/lease', { body: { ttl: 60 } });
    const token = lease.body.lease_token as string;
    expect((await run('demo/inspect')).status).toBe(423);
    expect((await run('demo/inspect', {}, 'wrong')).status).toBe(423);
    expect((await run('demo/inspect', {}, token)).status).toBe(200);
    await w.call('DELETE', '/api/v1/ops/a/lease', { lease: token });
    expect((await run('demo/inspect')).status).toBe(200);
  });

  test('the request log names the plugin route, with kind plugin', async () => {
    // Calls of every outcome: refused, answered (POST and GET), failed.
    expect((await run('demo/visit', { paste_probability: 1.5 })).status).toBe(400);
    const get = await w.call('GET', '/api/v1/a/plugin/demo/inspect?count=1&flag=yes&word=hi');
    expect(get.status).toBe(200);
    expect((await run('demo/throws')).status).toBe(500);
    for (let i = 0; i < 3; i += 1) await run('demo/inspect');
    const rows = readLogRows(w.dataDir).filter((r) => r.kind === 'plugin');
    const ends = rows.filter((r) => r.event === 'end');
    expect(ends.length).toBeGreaterThan(5);
    expect(ends).toContainEqual(
      expect.objectContaining({
        method: 'POST',
        name: 'demo/visit',
        path: '/api/v1/a/plugin/demo/visit',
        status: '400',
      }),
    );
    expect(ends).toContainEqual(
      expect.objectContaining({ method: 'GET', name: 'demo/inspect', status: '200' }),
    );
    expect(ends).toContainEqual(expect.objectContaining({ name: 'demo/throws', status: '500' }));
  });
});
