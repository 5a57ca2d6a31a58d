import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';
import type { ArchiveSite } from './fixtures/archive-site';
import { startArchiveSite } from './fixtures/archive-site';

type Body = Record<string, any>;

/**
 * archive/site-check on the stand-in archive: the home page's forms, the lookup of an archived
 * URL and its snapshot all found; with the markup changed, exactly the changed marks missing
 * and a bundle left; the site received GETs only (and, as the control, a plugin that posts a form
 * is what that check sees).
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

/** What the site received since `mark`, as `METHOD path`; `writes` keeps all but GETs. */
const received = (mark: number): string[] =>
  site.seen.slice(mark).map((s) => `${s.method} ${s.path}`);
const writes = (mark: number): string[] => received(mark).filter((r) => !r.startsWith('GET '));

test('the archive as the plugins know it: every mark found, only GETs', async () => {
  const mark = site.seen.length;
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
  // The recording holds the check's reads (the home page among them), and nothing but reads.
  expect(received(mark)).toContain('GET /');
  expect(writes(mark)).toEqual([]);
});

test('control: a plugin that submits a form is what the only-GETs check sees', async () => {
  const mark = site.seen.length;
  const saved = await w.call<Body>('POST', '/api/v1/c/plugin/archive/save', {
    body: { url: 'https://example.com/control' },
  });
  expect(saved.body).toMatchObject({ success: true });
  expect(writes(mark)).toContain('POST /submit/');
});

test('with the markup changed, exactly the changed marks are missing, with a bundle', async () => {
  site.setChanges([
    ['id="submiturl"', 'id="submit-url"'],
    ['itemprop="pubdate"', 'itemprop="datePublished"'],
  ]);
  try {
    const mark = site.seen.length;
    const r = await check();
    expect(r).toMatchObject({
      success: false,
      missing: ['SELECTORS.saveInput', 'SELECTORS.saveButton', 'SELECTORS.snapshotMark'],
    });
    expect(r.error).toMatch(/^Site changed: 3 of 9 marks of archive missing/);
    expect((await w.call('GET', `/api/v1/bundles/${r.debug_id}`)).status).toBe(200);
    expect(received(mark)).toContain('GET /');
    expect(writes(mark)).toEqual([]);
  } finally {
    site.setChanges([]);
  }
});
