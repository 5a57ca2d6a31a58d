import type { Navigator } from '../src/browser/navigator';
import type { Route } from '../src/http/route';
import { heldRoute, route } from '../src/http/route';
import { envelope } from '../src/http/schemas';
import type { LoopbackSite } from '@persona-browser/testkit/loopback';
import { capturedLogger } from './captured-logger';
import { serveRoutes } from './serve-routes';
import type { InProcessBrowser } from './in-process';
import { startInProcessBrowser } from './in-process';

/**
 * The one error path of the route layer, in-process with a real browser behind the page: a
 * programming error in a handler is a logged 500 in the API's envelope that shows no internals,
 * while a failure of the browser itself stays a 200 with `success: false`.
 */

const KEY = 'route-errors-key';
let browser: InProcessBrowser;
let navigator: Navigator;
let served: LoopbackSite | undefined;
let base: string;
const logLines: Array<Record<string, unknown>> = [];

const routes: Route[] = [
  heldRoute({
    name: 'bug',
    method: 'post',
    path: '/api/v1/test/:page_id/bug',
    auth: true,
    tag: 'Test',
    summary: 'a handler with a programming error',
    page: 'leased',
    hold: {},
    response: envelope({}),
    handler: async () => {
      const settings = undefined as unknown as { limit: number };
      return { limit: settings.limit };
    },
  }),
  heldRoute({
    name: 'protocol',
    method: 'post',
    path: '/api/v1/test/:page_id/protocol',
    auth: true,
    tag: 'Test',
    summary: 'the browser refuses a command',
    page: 'leased',
    hold: {},
    response: envelope({}),
    handler: async ({ page, call }) => {
      await page.cdp(call, (s) => s.send('Page.navigate', { url: 'not a url at all' }));
      return {};
    },
  }),
  route({
    name: 'bug-without-page',
    method: 'get',
    path: '/api/v1/test/bug',
    auth: true,
    tag: 'Test',
    summary: 'a programming error outside any page',
    response: envelope({}),
    handler: async () => {
      JSON.parse('{not json');
      return {};
    },
  }),
];

beforeAll(async () => {
  const logger = capturedLogger([KEY], logLines);
  browser = await startInProcessBrowser(logger);
  navigator = browser.navigator;
  await navigator.requirePool().create('p');
  served = await serveRoutes(routes, { navigator, key: KEY, logger });
  base = served.url;
});

afterAll(async () => {
  await served?.close();
  await browser?.close();
});

async function call(method: string, route: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(base + route, { method, headers: { authorization: `Bearer ${KEY}` } });
  return { status: res.status, body: await res.json() };
}

test('a programming error in a page handler is a logged 500 without internals; the page stays usable', async () => {
  const r = await call('POST', '/api/v1/test/p/bug');
  expect(r).toEqual({
    status: 500,
    body: { success: false, error: 'Internal server error', page_id: 'p' },
  });
  const logged = logLines.find((l) => l.message === 'unexpected error');
  expect(logged).toMatchObject({ level: 'error', path: '/api/v1/test/p/bug' });
  expect(JSON.stringify(logged)).toMatch(/Cannot read properties of undefined/);
  // The page's lock was released: the next call on it runs.
  const pool = navigator.requirePool();
  expect(pool.get('p').lock.locked).toBe(false);
  expect(pool.get('p').state).toBe('error');
});

test('a programming error outside any page is a logged 500 too', async () => {
  logLines.length = 0;
  const r = await call('GET', '/api/v1/test/bug');
  expect(r).toEqual({
    status: 500,
    body: { success: false, error: 'Internal server error', page_id: null },
  });
  expect(logLines.find((l) => l.message === 'unexpected error')).toMatchObject({
    path: '/api/v1/test/bug',
  });
});

test('a command the browser refuses is a browser-level failure: 200, success false, not logged as a fault', async () => {
  logLines.length = 0;
  const r = await call('POST', '/api/v1/test/p/protocol');
  expect(r.status).toBe(200);
  expect(r.body).toEqual({ success: false, error: expect.stringMatching(/URL|url/), page_id: 'p' });
  expect(logLines.filter((l) => l.level === 'error')).toEqual([]);
});
