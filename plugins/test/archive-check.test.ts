import { readLogRows } from '@persona-browser/testkit/request-log-file';
import { useSiteWorker } from '@persona-browser/testkit/site-worker';
import type { SeenRequest } from './fixtures/archive-site';
import { startArchiveSite } from './fixtures/archive-site';

/**
 * archive/check against a stand-in for archive.today: both ways of asking (the lookup address,
 * the home page's search form, pasted or typed), both answers, pages whose signs disagree, the
 * anti-bot interstitial, validation before the page is touched, and the request log.
 */

const file = useSiteWorker({
  site: startArchiveSite,
  env: (site) => ({ ARCHIVE_BASE_URL: site.url, PLUGIN_SEED: '11' }),
  pages: ['a'],
});

const check = (body: Record<string, unknown>) =>
  file.w.call<Record<string, any>>('POST', '/api/v1/a/plugin/archive/check', { body });

/** What the site saw during `work`. */
async function seenDuring(work: () => Promise<unknown>): Promise<SeenRequest[]> {
  const before = file.site.seen.length;
  await work();
  return file.site.seen.slice(before);
}

const pageUrl = async (): Promise<string> => {
  const r = await file.w.call<any>('GET', '/api/v1/system/status/pages');
  return r.body.pages.find((p: { page_id: string }) => p.page_id === 'a').url as string;
};

const ARCHIVED = 'https://example.com/articles/42?ref=home';
const MISSING = 'https://example.org/never/saved';

beforeAll(() => {
  file.site.setArchived(ARCHIVED, [
    { title: 'Article 42, as updated', text: 'The newer text.' },
    { title: 'Article 42', text: 'The first text.' },
  ]);
});

describe('archive/check', () => {
  test('direct_nav opens the lookup address for the URL and finds it archived', async () => {
    let r: any;
    const seen = await seenDuring(async () => {
      r = await check({ url: ARCHIVED, direct_nav_probability: 1 });
    });
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      url: ARCHIVED,
      is_archived: true,
      wtf: false,
      method: 'direct_nav',
    });
    const documents = seen.filter((s) => !s.path.startsWith('/favicon'));
    expect(documents.map((s) => `${s.method} ${s.path}`)).toEqual([
      `GET /${ARCHIVED.split('?')[0]}`,
    ]);
    expect(documents[0]?.query).toEqual({ ref: 'home' });
    // The result list stays on screen for archive/get.
    expect(await pageUrl()).toBe(`${file.site.url}/${ARCHIVED}`);
  });

  test('search_form pastes the URL into the home page’s search field', async () => {
    let r: any;
    const seen = await seenDuring(async () => {
      r = await check({ url: ARCHIVED, direct_nav_probability: 0, paste_probability: 1 });
    });
    expect(r.body).toMatchObject({
      url: ARCHIVED,
      is_archived: true,
      wtf: false,
      method: 'search_form',
    });
    expect(seen.map((s) => s.path).filter((p) => !p.startsWith('/favicon'))).toEqual([
      '/',
      '/search/',
    ]);
    const search = seen.find((s) => s.path === '/search/') as SeenRequest;
    expect(search.query.q).toBe(ARCHIVED);
    expect(search.query.fixture_pasted).toBe('1');
    // Ctrl+V is the only key pressed: no characters typed.
    expect(search.query.fixture_keys).toBe('0');
    expect(await pageUrl()).toBe(`${file.site.url}/search/?${new URLSearchParams(search.query)}`);
  });

  test('search_form types the URL key by key and finds it not archived', async () => {
    let r: any;
    const seen = await seenDuring(async () => {
      r = await check({ url: MISSING, direct_nav_probability: 0, paste_probability: 0 });
    });
    expect(r.body).toEqual({
      success: true,
      page_id: 'a',
      url: MISSING,
      is_archived: false,
      wtf: false,
      method: 'search_form',
    });
    const search = seen.find((s) => s.path === '/search/') as SeenRequest;
    expect(search.query.q).toBe(MISSING);
    expect(search.query.fixture_pasted).toBe('0');
    expect(Number(search.query.fixture_keys)).toBeGreaterThanOrEqual(MISSING.length);
  });

  test('direct_nav finds a URL with no snapshots not archived', async () => {
    const r = await check({ url: MISSING, direct_nav_probability: 1 });
    expect(r.body).toMatchObject({ is_archived: false, wtf: false, method: 'direct_nav' });
  });

  test('wtf when the page shows rows and "No results" at once, or neither', async () => {
    const both = 'https://example.net/contradicting';
    file.site.setArchived(both, [{ title: 'Contradicting', text: 'text' }]);
    file.site.setQuirk(both, 'contradicting');
    const r1 = await check({ url: both, direct_nav_probability: 1 });
    expect(r1.body).toMatchObject({ success: true, is_archived: true, wtf: true });
    const neither = 'https://example.net/blank';
    file.site.setQuirk(neither, 'blank');
    const r2 = await check({ url: neither, direct_nav_probability: 1 });
    expect(r2.body).toMatchObject({ success: true, is_archived: false, wtf: true });
  });
});

describe('the anti-bot interstitial', () => {
  afterEach(() => file.site.setInterstitial(false));

  test('is answered success:false saying so, by either way of asking', async () => {
    file.site.setInterstitial(true);
    const direct = await check({ url: ARCHIVED, direct_nav_probability: 1 });
    expect(direct.status).toBe(200);
    expect(direct.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'a',
      error: expect.stringMatching(
        /^Expected the archive's answer for https:\/\/example\.com\/articles\/42\?ref=home, found the archive's anti-bot security check/,
      ),
    });
    expect(direct.body).not.toHaveProperty('is_archived');
    const search = await check({ url: ARCHIVED, direct_nav_probability: 0 });
    expect(search.body.success).toBe(false);
    expect(search.body.error).toMatch(
      /^Expected the archive's home page with its search form, found the archive's anti-bot security check/,
    );
  });

  test('its captcha traffic stays out of the network capture (the family blacklist)', async () => {
    file.site.setInterstitial(true);
    const mark = file.site.seen.length;
    await check({ url: ARCHIVED, direct_nav_probability: 1 });
    // The page's own calls happened, and the capture kept the challenge's status call…
    const captured = async (): Promise<Record<string, any>> =>
      (await file.w.call<any>('GET', '/api/v1/ops/a/network')).body;
    const until = Date.now() + 10_000;
    let net = await captured();
    const urls = (): string[] => (net.http as Array<{ url: string }>).map((l) => l.url);
    const anchorSeen = (): boolean =>
      file.site.seen.slice(mark).some((s) => s.path === '/recaptcha/api2/anchor');
    while (
      !(urls().includes(`${file.site.url}/challenge/status`) && anchorSeen()) &&
      Date.now() < until
    ) {
      await new Promise((r) => setTimeout(r, 200));
      net = await captured();
    }
    expect(urls()).toContain(`${file.site.url}/challenge/status`);
    expect(anchorSeen()).toBe(true);
    // …but not the captcha's.
    expect(urls().filter((u) => u.includes('/recaptcha/'))).toEqual([]);
    expect(net.blacklist).toContain('/recaptcha/');
  });
});

describe('validation', () => {
  test('runs before the page is touched', async () => {
    const where = await pageUrl();
    const before = file.site.seen.length;
    const bad = await check({ url: ARCHIVED, paste_probability: 1.5 });
    expect([bad.status, bad.body]).toEqual([
      400,
      { success: false, error: 'paste_probability must be between 0.0 and 1.0', page_id: 'a' },
    ]);
    const direct = await check({ url: ARCHIVED, direct_nav_probability: -0.1 });
    expect([direct.status, direct.body.error]).toEqual([
      400,
      'direct_nav_probability must be between 0.0 and 1.0',
    ]);
    const noUrl = await check({});
    expect([noUrl.status, noUrl.body.error]).toEqual([400, 'url is required']);
    const notUrl = await check({ url: 'archive me' });
    expect([notUrl.status, notUrl.body.error]).toEqual([400, 'url must be an http or https URL']);
    expect(file.site.seen.length).toBe(before);
    expect(await pageUrl()).toBe(where);
  });

  test('the plugin list describes the parameters as the API gives them', async () => {
    const r = await file.w.call<any>('GET', '/api/v1/plugins', { auth: false });
    const descriptor = r.body.plugins.find((p: { name: string }) => p.name === 'archive/check');
    expect(descriptor).toMatchObject({
      methods: ['POST'],
      route: '/api/v1/{page_id}/plugin/archive/check',
    });
    const params = descriptor.parameters.map((p: any) => [p.name, p.type, p.required, p.default]);
    expect(params).toEqual([
      ['url', 'url', true, null],
      ['direct_nav_probability', 'number', false, 0.5],
      ['paste_probability', 'number', false, 0.9],
    ]);
    const docs = await file.w.call<string>('GET', '/api/v1/plugins/archive/check/docs', {
      auth: false,
    });
    expect(docs.status).toBe(200);
    expect(docs.body).toContain('direct_nav_probability');
  });
});

test('the request log has a start and an end row per call, kind plugin, name archive/check', async () => {
  const before = readLogRows(file.w.dataDir).length;
  expect((await check({ url: MISSING, direct_nav_probability: 1 })).status).toBe(200);
  expect((await check({})).status).toBe(400);
  // Each end row is written just after its reply has gone out: the previous test's last call
  // can end after `before` was counted, so the rows are those of the requests started since.
  const fresh = async () => {
    const deadline = Date.now() + 5_000;
    for (;;) {
      const all = readLogRows(file.w.dataDir);
      const started = new Set(
        all
          .slice(before)
          .filter((r) => r.event === 'start')
          .map((r) => r.id),
      );
      const rows = all.filter((r) => started.has(r.id));
      if (rows.length >= 4 || Date.now() > deadline) return rows;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const rows = await fresh();
  const ends = rows.filter((r) => r.event === 'end');
  expect(ends).toEqual([
    expect.objectContaining({
      method: 'POST',
      kind: 'plugin',
      name: 'archive/check',
      path: '/api/v1/a/plugin/archive/check',
      status: '200',
    }),
    expect.objectContaining({ kind: 'plugin', name: 'archive/check', status: '400' }),
  ]);
  const starts = rows.filter((r) => r.event === 'start');
  expect(starts.map((r) => r.id)).toEqual(ends.map((r) => r.id));
  expect(rows.every((r) => r.kind === 'plugin' && r.name === 'archive/check')).toBe(true);
});
