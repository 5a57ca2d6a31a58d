import fs from 'node:fs';
import path from 'node:path';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * Failed plugin calls leave failure bundles: what the error names, what the files hold (and
 * that no secret is among them), and the routes that serve them.
 */
const SECRET = 'family-secret-value-4711';
const HIDDEN = 'concealed-code-9981';

const root = writePluginTree(
  [
    {
      name: 'bad/leaky',
      manifest: manifest([]),
      js: `module.exports.default = { async run(ctx) {
        const secret = ctx.secret('BAD_TOKEN');
        ctx.conceal(${JSON.stringify(HIDDEN)});
        await ctx.page.goto(ctx.setting('BAD_BASE_URL') + '/second');
        await ctx.page.evaluate((a, b) => {
          document.title = 'title ' + a + ' ' + b;
          const p = document.createElement('p');
          p.id = 'leak';
          p.textContent = a + ' and ' + b;
          document.body.appendChild(p);
          return fetch('/missing?t=' + encodeURIComponent(a) + '&c=' + encodeURIComponent(b))
            .then((r) => r.status);
        }, secret, ${JSON.stringify(HIDDEN)});
        await ctx.network.settled();
        ctx.log.info('seen ' + secret + ' and ' + ${JSON.stringify(HIDDEN)}, { note: secret });
        return { success: false, error: 'leaky gave up' };
      } };`,
    },
    {
      name: 'bad/throws',
      manifest: manifest([{ name: 'n', type: 'number', min: 0, max: 1 }]),
      js: `module.exports.default = { async run(ctx) {
        await ctx.page.goto(ctx.setting('BAD_BASE_URL') + '/');
        ctx.log.warn('about to fail');
        null.prop;
      } };`,
    },
    {
      name: 'bad/slow',
      manifest: manifest([], { timeout_s: 2 }),
      js: 'module.exports.default = { async run(ctx) { for (;;) await ctx.sleep(300); } };',
    },
  ],
  {
    'bad/family.json': {
      settings: { BAD_BASE_URL: { default: 'http://127.0.0.1:9/' } },
      secrets: ['BAD_TOKEN'],
    },
  },
);

let w: RunningWorker;
let site: Fixture;

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker({
    env: { PLUGINS_DIR: root, BAD_BASE_URL: site.url, BAD_TOKEN: SECRET },
  });
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'a' } });
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

const run = (name: string, body?: unknown) =>
  w.call<Record<string, any>>('POST', `/api/v1/a/plugin/${name}`, { body });
const bundleDir = (id: string): string => path.join(w.dataDir, 'bundles', id);
const ID = /^\d{8}-\d{6}-[0-9a-f]{8}$/;

describe('a failed plugin call', () => {
  test('leaves a bundle with no secret in it, [redacted] in their place', async () => {
    const r = await run('bad/leaky');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      error: 'leaky gave up',
      page_id: 'a',
      debug_id: expect.stringMatching(ID),
    });
    // Control: the page really holds both values (extract-content reads it as it is).
    const page = await w.call<any>('POST', '/api/v1/ops/a/extract-content');
    expect(page.body.content).toContain(SECRET);
    expect(page.body.content).toContain(HIDDEN);

    const dir = bundleDir(r.body.debug_id as string);
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual(['log.jsonl', 'meta.json', 'network.json', 'page.html']);
    const forms = [SECRET, HIDDEN, encodeURIComponent(SECRET), encodeURIComponent(HIDDEN)];
    for (const f of files) {
      const bytes = fs.readFileSync(path.join(dir, f));
      for (const v of forms) expect([f, bytes.includes(v)]).toEqual([f, false]);
    }
    const read = (f: string): string => fs.readFileSync(path.join(dir, f), 'utf8');
    expect(read('page.html')).toContain('<p id="leak">[redacted] and [redacted]</p>');
    expect(read('page.html')).toContain('<title>title [redacted] [redacted]</title>');
    expect(read('network.json')).toContain('/missing?t=[redacted]&c=[redacted]');
    const log = read('log.jsonl')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(log).toEqual([
      expect.objectContaining({ level: 'info', message: 'seen [redacted] and [redacted]' }),
    ]);
    const meta = JSON.parse(read('meta.json'));
    expect(meta).toMatchObject({
      debug_id: r.body.debug_id,
      plugin: 'bad/leaky',
      page_id: 'a',
      url: `${site.url}/second`,
      error: { status: 200, message: 'leaky gave up' },
      missing: { 'screenshot.png': 'withheld: the page holds a secret value' },
    });
  });

  test('that throws leaves a screenshot, the HTML and the log; the API serves them', async () => {
    const r = await run('bad/throws');
    expect(r.status).toBe(500);
    expect(r.body).toEqual({
      success: false,
      error: expect.stringContaining('Plugin bad/throws failed unexpectedly'),
      page_id: 'a',
      debug_id: expect.stringMatching(ID),
    });
    const id = r.body.debug_id as string;
    const list = await w.call<any>('GET', '/api/v1/bundles');
    expect(list.body.bundles[0]).toEqual({
      debug_id: id,
      plugin: 'bad/throws',
      page_id: 'a',
      error: r.body.error,
      time: expect.any(String),
      size: expect.any(Number),
    });
    const meta = await w.call<any>('GET', `/api/v1/bundles/${id}`);
    expect(meta.body.bundle).toMatchObject({
      plugin: 'bad/throws',
      url: `${site.url}/`,
      missing: {},
    });
    const shot = await fetch(`${w.url}/api/v1/bundles/${id}/screenshot.png`, {
      headers: { authorization: 'Bearer test-service-key' },
    });
    expect(shot.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await shot.arrayBuffer());
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const html = await w.call<any>('GET', `/api/v1/bundles/${id}/page.html`);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const log = fs.readFileSync(path.join(bundleDir(id), 'log.jsonl'), 'utf8');
    expect(log).toContain('"message":"about to fail"');
    expect(log).toContain('"message":"plugin failed"');
    const unauth = await w.call<any>('GET', `/api/v1/bundles/${id}`, { auth: false });
    expect(unauth.status).toBe(401);
  });

  test('unknown ids and path tricks are a 404 in the envelope', async () => {
    const id = (await w.call<any>('GET', '/api/v1/bundles')).body.bundles[0].debug_id as string;
    // Something outside the bundles a trick would reach.
    fs.writeFileSync(path.join(w.dataDir, 'outside.json'), '{"leak":true}');
    for (const p of [
      '/api/v1/bundles/20990101-000000-00000000',
      `/api/v1/bundles/${id}/other.txt`,
      `/api/v1/bundles/${id}/..%2F..%2Foutside.json`,
      `/api/v1/bundles/..%2Foutside.json`,
      `/api/v1/bundles/..%2F/outside.json`,
    ]) {
      const r = await w.call<any>('GET', p);
      expect([p, r.status, r.body.success, r.body.page_id]).toEqual([p, 404, false, null]);
    }
  });

  test('stopped at its deadline leaves one; a 400 of parameter checks does not', async () => {
    const r = await run('bad/slow');
    expect(r.body).toMatchObject({ success: false, debug_id: expect.stringMatching(ID) });
    const meta = await w.call<any>('GET', `/api/v1/bundles/${r.body.debug_id}`);
    expect(meta.body.bundle.error.message).toBe(r.body.error);
    const before = (await w.call<any>('GET', '/api/v1/bundles')).body.bundles.length;
    const bad = await run('bad/throws', { n: 5 });
    expect(bad.status).toBe(400);
    expect(bad.body.debug_id).toBeUndefined();
    expect((await w.call<any>('GET', '/api/v1/bundles')).body.bundles.length).toBe(before);
  });
});
