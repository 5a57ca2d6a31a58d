/**
 * The pool status shows a page's current title and URL the moment a call that moved the page
 * answers, not a health probe later; a title the page's script changes afterwards follows at
 * the next probe; a page without a title shows an empty one (not its URL).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';

type Body = Record<string, any>;

let w: RunningWorker;
let site: http.Server;
let base: string;

const PAGES: Record<string, string> = {
  '/first': '<!doctype html><title>First page</title><p>one',
  '/second': '<!doctype html><title>Second page</title><p>two',
  '/untitled': '<!doctype html><p>no title here',
  '/retitled':
    '<!doctype html><title>Before</title><p>three' +
    "<script>setTimeout(() => { document.title = 'After'; }, 1500);</script>",
};

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const page = PAGES[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page ?? 'not here');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  w = await startWorker();
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 't' } });
});
afterAll(async () => {
  await w?.stop();
  site?.closeAllConnections();
  await new Promise((resolve) => site?.close(resolve));
});

async function entry(): Promise<Body> {
  const r = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  expect(r.status).toBe(200);
  return (r.body.pages as Body[]).find((p) => p.page_id === 't') as Body;
}

async function navigate(path: string): Promise<void> {
  const r = await w.call<Body>('POST', '/api/v1/ops/t/navigate', { body: { url: base + path } });
  expect(r.body.success).toBe(true);
}

describe('pool status: title and url', () => {
  test('right after navigate answers, the status shows the new page’s title and url', async () => {
    for (const path of ['/first', '/second', '/first', '/second']) {
      await navigate(path);
      const page = await entry();
      expect({ url: page.url, title: page.title }).toEqual({
        url: base + path,
        title: PAGES[path]?.match(/<title>(.*)<\/title>/)?.[1],
      });
    }
  }, 60_000);

  test('a page without a title shows an empty title, not its address', async () => {
    await navigate('/first');
    await navigate('/untitled');
    expect(await entry()).toMatchObject({ url: `${base}/untitled`, title: '' });
  }, 30_000);

  test('a title the page’s script changes later shows at the next health probe', async () => {
    await navigate('/retitled');
    expect((await entry()).title).toBe('Before');
    // Probes run every 2 s; the page changes its title 1.5 s after loading.
    const until = Date.now() + 6_000;
    let title = '';
    while (Date.now() < until && title !== 'After') {
      await sleep(200);
      title = (await entry()).title as string;
    }
    expect(title).toBe('After');
  }, 30_000);
});
