import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * A click on a link the browser has prerendered activates the prerendered page: the tab moves
 * to another target and puppeteer to another session. Human input and the network capture
 * must follow it, and the pool must report where the page really is.
 */

type Body = Record<string, any>;
let w: RunningWorker;
let server: http.Server;
let base: string;
/** Requests for /next, with the Sec-Purpose header each carried. */
const nextRequests: string[] = [];
/** How many times a prerendered /next said it had loaded. */
let prerenderLoads = 0;

const START = `<!doctype html><title>start</title>
<script type="speculationrules">{"prerender":[{"source":"list","urls":["/next"]}]}</script>
<a id="go" href="/next" style="display:block;margin:100px;font-size:40px">next page</a>`;

// /next says whether it was activated from a prerender, mirrors what is typed into its input,
// and fetches /api/after one second after it is shown: a request of the activated page. While
// prerendered, it tells the server once it has loaded (/api/prerender-loaded).
const NEXT = `<!doctype html><title>next</title>
<p id="how"></p><input id="q" autocomplete="off" style="margin:100px;font-size:30px">
<p id="typed"></p>
<script>
  const shown = () => {
    const nav = performance.getEntriesByType('navigation')[0];
    document.getElementById('how').textContent = nav.activationStart > 0 ? 'activated' : 'loaded';
    setTimeout(() => fetch('/api/after').then((r) => r.text()), 1000);
  };
  if (document.prerendering) {
    document.addEventListener('prerenderingchange', shown, { once: true });
    addEventListener('load', () => fetch('/api/prerender-loaded'), { once: true });
  } else shown();
  document.getElementById('q').addEventListener('input', (e) => {
    document.getElementById('typed').textContent = 'typed:' + e.target.value;
  });
</script>`;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/next') nextRequests.push(String(req.headers['sec-purpose'] ?? ''));
    if (path === '/api/prerender-loaded') prerenderLoads += 1;
    const type = path.startsWith('/api/') ? 'application/json' : 'text/html; charset=utf-8';
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
    if (path === '/start') res.end(START);
    else if (path === '/next') res.end(NEXT);
    else res.end(JSON.stringify({ after: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  w = await startWorker();
  await w.waitInitialized();
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'pre' } });
});
afterAll(async () => {
  await w?.stop();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

const call = (method: string, route: string, body?: unknown) =>
  w.call<Body>(method, `/api/v1/${route}`, { body });

/**
 * Opens /start, waits for the browser to prerender /next and for that page to have loaded, then
 * clicks the link like a person. A prerender the browser declined shows as a plain load.
 */
async function activate(): Promise<string> {
  nextRequests.length = 0;
  prerenderLoads = 0;
  await call('POST', 'ops/pre/navigate', { url: `${base}/start` });
  const prerendered = Date.now() + 10_000;
  while (prerenderLoads === 0 && Date.now() < prerendered) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const click = await call('POST', 'primitive/pre/click-element', { selector: '#go' });
  expect(click.body.success).toBe(true);
  // The click starts the activation; the page is shown a moment later.
  const shown = Date.now() + 10_000;
  let how = '';
  while (!how && Date.now() < shown) {
    const read = await call('POST', 'ops/pre/extract-content');
    how = (/<p id="how">(\w+)<\/p>/.exec(String(read.body.content)) ?? [])[1] ?? '';
    if (!how) await new Promise((r) => setTimeout(r, 100));
  }
  return how;
}

test('after a prerendered page is activated by a click, typing, capture and the pool follow it', async () => {
  let how = '';
  // The browser may decline a prerender now and then; an activation must happen within a few.
  for (let attempt = 0; attempt < 3 && how !== 'activated'; attempt += 1) how = await activate();
  expect(how).toBe('activated');
  // The only request for /next was the prerender's: the click did not load it again.
  expect(nextRequests).toEqual([expect.stringContaining('prerender')]);

  const pool = await w.call<Body>('GET', '/api/v1/system/status/pages', { auth: false });
  expect((pool.body.pages as Body[])[0]).toMatchObject({ page_id: 'pre', url: `${base}/next` });

  expect((await call('POST', 'primitive/pre/click-element', { selector: '#q' })).body.success).toBe(
    true,
  );
  const typed = await call('POST', 'primitive/pre/type-text', { text: 'after the swap' });
  expect(typed.body).toMatchObject({ success: true, url: `${base}/next` });
  const read = await call('POST', 'ops/pre/extract-content');
  expect(read.body.content).toContain('<p id="typed">typed:after the swap</p>');

  // /api/after was fetched by the activated page, on the session puppeteer moved to.
  const until = Date.now() + 10_000;
  let lines: Body[] = [];
  while (Date.now() < until) {
    const net = await w.call<Body>('GET', '/api/v1/ops/pre/network?url_contains=/api/after');
    lines = net.body.http as Body[];
    if (lines.some((l) => l.kind === 'response')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(lines).toContainEqual(
    expect.objectContaining({ kind: 'response', url: `${base}/api/after`, status: 200 }),
  );
});
