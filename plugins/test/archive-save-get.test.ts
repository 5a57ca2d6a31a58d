import { useSiteWorker } from '@persona-browser/testkit/site-worker';
import type { SeenRequest } from './fixtures/archive-site';
import { startArchiveSite } from './fixtures/archive-site';

/**
 * archive/save and archive/get against a stand-in for archive.today: continuing from what
 * archive/check left on the page or starting afresh, a save followed through its progress page,
 * the newest snapshot read back, and the answers when the page is not the one expected.
 */

/** How long a save is followed here (ARCHIVE_SAVE_WAIT_S): short, for the unfinished save. */
const SAVE_WAIT_S = 6;

const file = useSiteWorker({
  site: startArchiveSite,
  env: (site) => ({
    ARCHIVE_BASE_URL: site.url,
    ARCHIVE_SAVE_WAIT_S: String(SAVE_WAIT_S),
    PLUGIN_SEED: '5',
  }),
  pages: ['a'],
});

const run = (plugin: string, body: Record<string, unknown>) =>
  file.w.call<Record<string, any>>('POST', `/api/v1/a/plugin/archive/${plugin}`, { body });

const lookUp = (url: string) => run('check', { url, direct_nav_probability: 1 });

/** The saves the site received, as the URL each submitted. */
const submitted = (since: number): string[] =>
  file.site.seen
    .slice(since)
    .filter((s: SeenRequest) => s.path === '/submit/')
    .map((s) => s.form?.url ?? '');

describe('archive/save', () => {
  test('from_check submits the "No results" page’s form and follows the save to its snapshot', async () => {
    const url = 'https://example.com/fresh/story?id=7';
    expect((await lookUp(url)).body).toMatchObject({ is_archived: false, wtf: false });
    const mark = file.site.seen.length;
    const r = await run('save', { from_check: true });
    const [snapshot] = file.site.snapshotsOf(url);
    expect(snapshot).toBeDefined();
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      url,
      from_check: true,
      current_url: `${file.site.url}/${snapshot?.id}`,
      message: 'Saved',
    });
    expect(submitted(mark)).toEqual([url]);
    // The progress page was shown (and reloaded) on the way.
    expect(file.site.seen.slice(mark).filter((s) => s.path.startsWith('/wip/')).length).toBe(3);
    // The archive now lists it.
    expect((await lookUp(url)).body).toMatchObject({ is_archived: true, wtf: false });
  });

  test('without from_check starts from the home page’s save form', async () => {
    const url = 'https://example.com/another/page';
    const mark = file.site.seen.length;
    const r = await run('save', { url });
    const [snapshot] = file.site.snapshotsOf(url);
    expect(r.body).toMatchObject({
      success: true,
      url,
      from_check: false,
      current_url: `${file.site.url}/${snapshot?.id}`,
      message: 'Saved',
    });
    const paths = file.site.seen.slice(mark).map((s) => `${s.method} ${s.path}`);
    expect(paths.slice(0, 2)).toEqual(['GET /', 'POST /submit/']);
    expect(submitted(mark)).toEqual([url]);
    expect(file.site.seen.slice(mark).find((s) => s.path === '/submit/')?.form?.submitid).toBe(
      'fixture-submit-id',
    );
  });

  test('answers "Save in progress" on the progress page when the archive is still working', async () => {
    file.site.setSaveSteps(Infinity);
    try {
      const mark = file.site.seen.length;
      const r = await run('save', { url: 'https://example.com/slow/to/save' });
      const answered = Date.now();
      expect(r.body).toMatchObject({ success: true, from_check: false });
      expect(r.body.message).toMatch(
        /^Save in progress: the archive was still working after \d+ s/,
      );
      expect(r.body.current_url).toMatch(new RegExp(`^${file.site.url}/wip/\\w+$`));
      // Followed for ARCHIVE_SAVE_WAIT_S from the submission, no less and not much more.
      const submittedAt = file.site.seen.slice(mark).find((s) => s.path === '/submit/')?.at ?? 0;
      expect((answered - submittedAt) / 1000).toBeGreaterThanOrEqual(SAVE_WAIT_S);
      expect((answered - submittedAt) / 1000).toBeLessThan(SAVE_WAIT_S + 4);
      // The progress page kept reloading meanwhile.
      const wip = file.site.seen.slice(mark).filter((s) => s.path.startsWith('/wip/'));
      expect(wip.length).toBeGreaterThanOrEqual(SAVE_WAIT_S - 1);
    } finally {
      file.site.setSaveSteps(2);
    }
  });

  test('from_check on a page that is not "No results" says what it expected and found', async () => {
    const url = 'https://example.com/already/there';
    file.site.setArchived(url, [{ title: 'There', text: 'Already archived.' }]);
    await lookUp(url);
    const mark = file.site.seen.length;
    const r = await run('save', { from_check: true });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'a',
      error: `Expected the "No results" page left by archive/check, with its "archive this url" form, found a result list of 1 snapshot(s) at ${file.site.url}/${url}`,
    });
    expect(submitted(mark)).toEqual([]);
  });

  test('from_check with a url other than the one the form holds refuses to save', async () => {
    await lookUp('https://example.com/not/yet');
    const mark = file.site.seen.length;
    const r = await run('save', { from_check: true, url: 'https://example.com/other' });
    expect(r.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'a',
      error:
        'Expected the archive form for https://example.com/other, found one holding https://example.com/not/yet',
    });
    expect(submitted(mark)).toEqual([]);
  });

  test('needs a url unless from_check, checked before the page is touched', async () => {
    const mark = file.site.seen.length;
    for (const body of [{}, { from_check: false }]) {
      const r = await run('save', body);
      expect([r.status, r.body]).toEqual([
        400,
        { success: false, page_id: 'a', error: 'url is required unless from_check is true' },
      ]);
    }
    const get = await run('get', { from_check: 'maybe' });
    expect([get.status, get.body.error]).toEqual([400, 'from_check must be true or false']);
    expect(file.site.seen.length).toBe(mark);
  });
});

describe('archive/get', () => {
  const url = 'https://example.com/news/2024/report';
  beforeAll(() => {
    file.site.setArchived(url, [
      { title: 'Report (corrected)', text: 'Corrected figures.\n\nSecond paragraph.' },
      { title: 'Report', text: 'First figures.' },
    ]);
  });

  test('from_check opens the newest snapshot of the list the check left', async () => {
    expect((await lookUp(url)).body).toMatchObject({ is_archived: true });
    const [newest] = file.site.snapshotsOf(url);
    const mark = file.site.seen.length;
    const r = await run('get', { from_check: true });
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      url,
      archive_url: `${file.site.url}/${newest?.id}`,
      page_title: 'Report (corrected)',
      page_content: 'Corrected figures.\n\nSecond paragraph.',
      message: 'Newest of 2 snapshots',
    });
    // Straight from the list to the snapshot: no second lookup.
    expect(
      file.site.seen
        .slice(mark)
        .map((s) => s.path)
        .filter((p) => !p.startsWith('/favicon')),
    ).toEqual([`/${newest?.id}`]);
  });

  test('by url looks the URL up first', async () => {
    await file.w.call('POST', '/api/v1/ops/a/navigate', { body: { url: 'about:blank' } });
    const mark = file.site.seen.length;
    const r = await run('get', { url });
    const [newest] = file.site.snapshotsOf(url);
    expect(r.body).toMatchObject({
      success: true,
      url,
      archive_url: `${file.site.url}/${newest?.id}`,
      page_title: newest?.title,
      page_content: newest?.text,
    });
    const paths = file.site.seen
      .slice(mark)
      .map((s) => s.path)
      .filter((p) => !p.startsWith('/favicon'));
    expect(paths).toEqual([`/${url}`, `/${newest?.id}`]);
  });

  test('by url of an unarchived URL answers nulls and says so', async () => {
    const r = await run('get', { url: 'https://example.com/nothing/here' });
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      url: 'https://example.com/nothing/here',
      archive_url: null,
      page_title: null,
      page_content: null,
      message: 'Not archived: the archive has no snapshot of this URL',
    });
  });

  test('from_check on the "No results" page says the URL is not archived', async () => {
    await lookUp('https://example.com/nothing/here');
    const r = await run('get', { from_check: true });
    expect(r.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'a',
      error: `Expected the result list of snapshots left by archive/check, found the "No results" page at ${file.site.url}/https://example.com/nothing/here: the URL is not archived`,
    });
  });

  test('stops at the anti-bot interstitial and says so', async () => {
    file.site.setInterstitial(true);
    try {
      const r = await run('get', { url });
      expect(r.body.success).toBe(false);
      expect(r.body.error).toMatch(/found the archive's anti-bot security check \("One more step"/);
      const save = await run('save', { url });
      expect(save.body.success).toBe(false);
      expect(save.body.error).toMatch(
        /^Expected the archive's home page with its save form, found the archive's anti-bot/,
      );
    } finally {
      file.site.setInterstitial(false);
    }
  });
});
