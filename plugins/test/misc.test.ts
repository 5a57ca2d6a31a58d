import type { VisionStandin } from '@persona-browser/testkit/vision-standin';
import { startVisionStandin } from '@persona-browser/testkit/vision-standin';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';
import type { NewsSite } from './fixtures/news-site';
import { startNewsSite } from './fixtures/news-site';

/**
 * misc/news-search against a stand-in of AP News: through the search box (pasted and typed),
 * straight to the results, straight to a URL of the site, and the pages it does not expect.
 * The worker here has no vision key, which is detect-bounding-box's failure case.
 */

type Body = Record<string, any>;

let site: NewsSite;
let vision: VisionStandin;
let w: RunningWorker;

beforeAll(async () => {
  site = await startNewsSite();
  vision = await startVisionStandin();
  w = await startWorker({
    env: {
      NEWS_BASE_URL: site.url,
      PLUGIN_SEED: '11',
      VISION_BASE_URL: vision.url,
      VISION_API_KEY_GRATIS: '',
      VISION_API_KEY_PAGA: '',
    },
  });
  await w.waitInitialized();
  const created = await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'n' } });
  expect(created.status).toBe(200);
});
afterAll(async () => {
  await w?.stop();
  await vision?.close();
  await site?.close();
});
beforeEach(() => site.reset());

const search = (body: Body) => w.call<Body>('POST', '/api/v1/n/plugin/misc/news-search', { body });

/** The results address as the site's form (and the plugin) encodes `q`. */
const results = (q: string): string => `${site.url}/search?${new URLSearchParams({ q })}`;

test('both plugins load, with their routes and parameters', async () => {
  const r = await w.call<Body>('GET', '/api/v1/plugins');
  const byName = new Map((r.body.plugins as Body[]).map((p) => [p.name, p]));
  expect(byName.get('misc/news-search')).toMatchObject({
    route: '/api/v1/{page_id}/plugin/misc/news-search',
    methods: ['POST'],
  });
  expect(byName.get('misc/news-search')!.parameters.map((p: Body) => [p.name, p.default])).toEqual([
    ['query', null],
    ['direct_access_probability', 0.5],
    ['paste_probability', 0.8],
  ]);
  expect(byName.get('misc/detect-bounding-box')).toMatchObject({
    route: '/api/v1/{page_id}/plugin/misc/detect-bounding-box',
  });
  expect((r.body.skipped as Body[]).filter((s) => s.name.startsWith('misc/'))).toEqual([]);
});

test('search box, pasted: a first visit accepts the consent banner, the form sends the term', async () => {
  const query = 'climate summit & "coal"';
  const r = await search({ query, direct_access_probability: 0, paste_probability: 1 });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    success: true,
    page_id: 'n',
    method: 'search_box',
    url: results(query),
    query,
    page_url: results(query),
    message: expect.stringMatching(/^Pasted the query into the search box\. Read 2 headlines/),
  });
  expect(r.body.message).toContain('(the site counts "2 results")');
  expect(r.body.message).toContain('the first is "Climate summit ends with a late deal on coal"');
  // The home page, then the overlay's form: sent from the page, with the consent given.
  expect(site.requests).toEqual(['GET /', `GET /search?${new URLSearchParams({ q: query })}`]);
  expect(site.consents).toBe(1);
  expect(site.searches).toEqual([
    { q: query, referer: `${site.url}/`, fetchSite: 'same-origin', consented: true },
  ]);
});

test('search box, typed: the site receives exactly the term typed, typos corrected', async () => {
  const query = 'rail strike';
  const r = await search({ query, direct_access_probability: 0, paste_probability: 0 });
  expect(r.body).toMatchObject({
    success: true,
    method: 'search_box',
    url: results(query),
    page_url: results(query),
    query,
  });
  expect(r.body.message).toMatch(
    /^Typed the query into the search box\. Read 1 headline for "rail strike".*"Rail strike called off/,
  );
  expect(site.searches).toEqual([
    { q: query, referer: `${site.url}/`, fetchSite: 'same-origin', consented: true },
  ]);
  // Accepted once, the banner stays away.
  expect(site.consents).toBe(0);
});

test('direct access opens the results address without the home page', async () => {
  const r = await search({ query: '  museum statues ', direct_access_probability: 1 });
  expect(r.body).toEqual({
    success: true,
    page_id: 'n',
    method: 'direct_access',
    url: results('museum statues'),
    query: 'museum statues',
    page_url: results('museum statues'),
    message:
      'Read 1 headline for "museum statues" (the site counts "1 results"); ' +
      'the first is "Museum returns bronze statues to Benin"',
  });
  expect(site.requests).toEqual(['GET /search?q=museum+statues']);
  // An address opened, not a form sent from a page of the site.
  expect(site.searches).toEqual([
    { q: 'museum statues', referer: null, fetchSite: 'none', consented: true },
  ]);

  const none = await search({ query: 'zebra crossing', direct_access_probability: 1 });
  expect(none.body).toMatchObject({ success: true, message: 'No results for "zebra crossing"' });
  expect(site.searches.map((s) => s.q)).toEqual(['museum statues', 'zebra crossing']);
});

test('a full URL of the site is opened as it is; another site is refused before any load', async () => {
  const article = `${site.url}/article/rail-strike-called-off`;
  const r = await search({ query: article, direct_access_probability: 0 });
  expect(r.body).toEqual({
    success: true,
    page_id: 'n',
    method: 'direct_url',
    url: article,
    query: article,
    page_url: article,
    message: 'Opened "Rail strike called off after overnight talks"',
  });
  expect(site.requests).toEqual(['GET /article/rail-strike-called-off']);
  expect(site.searches).toEqual([]);

  const missing = `${site.url}/article/no-such-story`;
  const gone = await search({ query: missing });
  expect(gone.body).toEqual({
    success: false,
    debug_id: expect.any(String),
    page_id: 'n',
    error: `Expected the page at ${missing}, found HTTP 404: a page titled "Page not found" at ${missing}`,
  });

  site.requests.length = 0;
  const other = await search({ query: 'https://example.com/news/today' });
  expect(other.body).toEqual({
    success: false,
    debug_id: expect.any(String),
    page_id: 'n',
    error: `Expected a URL of AP News (${site.url}), found https://example.com/news/today`,
  });
  expect(site.requests).toEqual([]);
});

test('parameters are checked before the site sees anything', async () => {
  const cases: Array<[Body, string]> = [
    [
      { query: 'climate', direct_access_probability: 2 },
      'direct_access_probability must be between 0.0 and 1.0',
    ],
    [
      { query: 'climate', paste_probability: -0.1 },
      'paste_probability must be between 0.0 and 1.0',
    ],
    [{ direct_access_probability: 1 }, 'query is required'],
    [{ query: '   ', direct_access_probability: 1 }, 'query must not be blank'],
    [
      { query: 'ftp://files.example.com/news', direct_access_probability: 1 },
      'query must be a search term or an http(s) URL of the news site',
    ],
  ];
  for (const [body, error] of cases) {
    const r = await search(body);
    expect([r.status, r.body]).toEqual([400, { success: false, page_id: 'n', error }]);
  }
  expect(site.requests).toEqual([]);
});

test('a home page without the search box: success false saying what was expected and found', async () => {
  site.variant.home = 'paywall';
  const r = await search({ query: 'climate', direct_access_probability: 0 });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    success: false,
    debug_id: expect.any(String),
    page_id: 'n',
    error:
      "Expected AP News's search box (button.SearchOverlay-search-button or " +
      `input.SearchOverlay-search-input), found a page titled "Subscribe to AP News" at ${site.url}/`,
  });
  expect(site.requests).toEqual(['GET /']);
  expect(site.searches).toEqual([]);
});

test('a results page without results or notice: success false naming the page found', async () => {
  site.variant.search = 'blocked';
  const r = await search({ query: 'climate', direct_access_probability: 1 });
  expect(r.body).toEqual({
    success: false,
    debug_id: expect.any(String),
    page_id: 'n',
    error:
      "Expected AP News's search results (.SearchResultsModule-results .PageList-items-item) " +
      'or its no-results notice (.SearchResultsModule-noResults), found a page titled ' +
      `"Access denied" at ${results('climate')}`,
  });
});

test('detect-bounding-box without a vision key: success false naming both variables', async () => {
  const r = await w.call<Body>('POST', '/api/v1/n/plugin/misc/detect-bounding-box', {
    body: { description: 'the Subscribe button' },
  });
  expect(r.status).toBe(200);
  expect(r.body).toEqual({
    success: false,
    debug_id: expect.any(String),
    page_id: 'n',
    error: expect.any(String),
  });
  expect(r.body.error).toMatch(/^Vision search failed: No vision API key/);
  expect(r.body.error).toContain('VISION_API_KEY_GRATIS');
  expect(r.body.error).toContain('VISION_API_KEY_PAGA');
  expect(vision.requests).toEqual([]);
});
