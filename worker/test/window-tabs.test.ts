import fs from 'node:fs';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { browserPids, startWorker } from '@persona-browser/testkit/worker';

/**
 * The browser's window holds the pool's pages and nothing beside them: the pool's first page is
 * the tab the browser opened at its start (a second blank tab would be a second renderer), and
 * when the last page goes a blank tab takes its place, so the window and the browser stay.
 * Tabs are read as a person at the screen would count them, through DevTools on a port.
 */
type Body = Record<string, any>;
let site: Fixture;
let w: RunningWorker;

beforeAll(async () => {
  site = await startFixture();
  // A persona telling another system than the machine's: every page must be told so.
  w = await startWorker({ env: { DEVTOOLS_PORT: '0', BROWSER_PLATFORM: 'windows' } });
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

/** The browser's tabs (their URLs), as any client of its DevTools sees them. */
async function tabs(): Promise<string[]> {
  const observer = await Observer.attach(w);
  const session = await observer.browserSession();
  try {
    const { targetInfos } = await session.send('Target.getTargets');
    return targetInfos.filter((t) => t.type === 'page').map((t) => t.url);
  } finally {
    await session.detach().catch(() => undefined);
    await observer.detach();
  }
}

/** The browser's main process: the one without a --type= (zygotes, renderers have one). */
const mainPid = (): number | undefined =>
  browserPids(w).find(
    (pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type='),
  );

async function titleAfterVisit(id: string, query: string): Promise<string> {
  const nav = await w.call<Body>('POST', `/api/v1/ops/${id}/navigate`, {
    body: { url: `${site.url}/second?${query}` },
  });
  expect(nav.status).toBe(200);
  const content = await w.call<Body>('POST', `/api/v1/ops/${id}/extract-content`);
  return content.body.title as string;
}

test('the first page is the window’s only tab; the last page destroyed leaves one blank tab, and the browser', async () => {
  const browser = mainPid();
  expect(await tabs()).toEqual(['about:blank']);

  expect((await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'a' } })).status).toBe(
    200,
  );
  expect(await titleAfterVisit('a', 'first')).toBe('Second page');
  expect(await tabs()).toEqual([`${site.url}/second?first`]);

  expect((await w.call('DELETE', '/api/v1/ops/a/destroy-page')).status).toBe(200);
  expect(await tabs()).toEqual(['about:blank']);
  const status = await w.call<Body>('GET', '/api/v1/system/status', { auth: false });
  expect(status.body).toMatchObject({ initialized: true, page_count: 0 });
  expect(mainPid()).toBe(browser);

  // The next page is made in that blank tab: still one tab, and it works.
  expect((await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'b' } })).status).toBe(
    200,
  );
  expect(await titleAfterVisit('b', 'again')).toBe('Second page');
  expect(await tabs()).toEqual([`${site.url}/second?again`]);
  expect(mainPid()).toBe(browser);
  await w.call('DELETE', '/api/v1/ops/b/destroy-page');
});

test('a page made in the startup tab and one in a tab of its own look alike to the site', async () => {
  // After the test above the pool is empty again: 'c' is made in the blank tab, 'd' in a new one.
  await w.call('GET', '/api/v1/system/start');
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'c' } });
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'd' } });
  expect(await titleAfterVisit('c', 'c')).toBe('Second page');
  expect(await titleAfterVisit('d', 'd')).toBe('Second page');
  const observer = await Observer.attach(w);
  try {
    const look = `({ history: history.length, webdriver: navigator.webdriver, agent: navigator.userAgent,
      platform: navigator.platform, hint: navigator.userAgentData.platform,
      opener: window.opener === null, name: window.name, referrer: document.referrer })`;
    const c = await observer.read<Body>('?c', look);
    const d = await observer.read<Body>('?d', look);
    expect(c).toEqual(d);
    expect(c).toMatchObject({ platform: 'Win32', hint: 'Windows', webdriver: false });
  } finally {
    await observer.detach();
  }
  await w.call('DELETE', '/api/v1/ops/c/destroy-page');
  await w.call('DELETE', '/api/v1/ops/d/destroy-page');
});

test('a page destroyed while another is made leaves the window with the pool’s page and no blank tab beside it', async () => {
  for (let round = 0; round < 3; round += 1) {
    const [old, next] = [`old${round}`, `next${round}`];
    expect(
      (await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: old } })).status,
    ).toBe(200);
    // The new page's tab is being opened while the last page goes.
    const [made, destroyed] = await Promise.all([
      w.call('POST', '/api/v1/ops/create-page', { body: { page_id: next } }),
      w.call('DELETE', `/api/v1/ops/${old}/destroy-page`),
    ]);
    expect([made.status, destroyed.status]).toEqual([200, 200]);
    expect(await tabs()).toEqual(['about:blank']);
    expect(await titleAfterVisit(next, next)).toBe('Second page');
    expect(await tabs()).toEqual([`${site.url}/second?${next}`]);
    expect((await w.call('DELETE', `/api/v1/ops/${next}/destroy-page`)).status).toBe(200);
    expect(await tabs()).toEqual(['about:blank']);
  }
});
