import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';
import type { ArchiveSite } from './fixtures/archive-site';
import { startArchiveSite } from './fixtures/archive-site';

type Body = Record<string, any>;

/**
 * archive/site-check on the stand-in archive: the home page's forms, the lookup of an archived
 * URL and its snapshot all found; with the markup changed, exactly the changed marks missing
 * and a bundle left; the site received GETs only.
 */
let w: RunningWorker;
let site: ArchiveSite;
const URL_ = 'https://example.com/page';

beforeAll(async () => {
  site = await startArchiveSite();
  site.setArchived(URL_, [{ title: 'Example', text: 'hello' }]);
  w = await startWorker({ env: { ARCHIVE_BASE_URL: site.url, PLUGIN_SEED: '3' } });
  await w.waitInitialized();
  expect((await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'c' } })).status).toBe(
    200,
  );
});
afterAll(async () => {
  await w?.stop();
  await site?.close();
});

const check = async (): Promise<Body> =>
  (
    await w.call<Body>('POST', '/api/v1/c/plugin/archive/site-check', {
      body: { url: URL_, wait_s: 1 },
    })
  ).body;

test('the archive as the plugins know it: every mark found, only GETs', async () => {
  const r = await check();
  expect(r).toMatchObject({ success: true, missing: [] });
  expect((r.items as Body[]).map((i) => `${i.where}: ${i.name}`)).toEqual([
    'home: SELECTORS.searchInput',
    'home: SELECTORS.searchButton',
    'home: SELECTORS.saveInput',
    'home: SELECTORS.saveButton',
    `lookup of ${URL_}: SELECTORS.content`,
    `lookup of ${URL_}: SELECTORS.resultRow`,
    `lookup of ${URL_}: SELECTORS.resultLink`,
    'snapshot: SELECTORS.snapshotMark',
    'snapshot: SELECTORS.savedFrom',
  ]);
  expect(site.seen.filter((s) => s.method !== 'GET')).toEqual([]);
});

test('with the markup changed, exactly the changed marks are missing, with a bundle', async () => {
  site.setChanges([
    ['id="submiturl"', 'id="submit-url"'],
    ['itemprop="pubdate"', 'itemprop="datePublished"'],
  ]);
  try {
    const r = await check();
    expect(r).toMatchObject({
      success: false,
      missing: ['SELECTORS.saveInput', 'SELECTORS.saveButton', 'SELECTORS.snapshotMark'],
    });
    expect(r.error).toMatch(/^Site changed: 3 of 9 marks of archive missing/);
    expect((await w.call('GET', `/api/v1/bundles/${r.debug_id}`)).status).toBe(200);
    expect(site.seen.filter((s) => s.method !== 'GET')).toEqual([]);
  } finally {
    site.setChanges([]);
  }
});
