import type { RunningWorker } from '@persona-browser/testkit/worker';
import type { SocialSite } from './fixtures/social-site';
import type { Body } from './fixtures/social-world';
import { socialWorld } from './fixtures/social-world';
import { TELEMETRY_PATHS } from './fixtures/social-site';

/**
 * The social family against a stand-in for Instagram: social/state in every state,
 * social/open-account (exact, fuzzy, with @, from an open post, from a page without the
 * navigation, unknown handle, login wall, a bad handle), social/get-posts-profile and the
 * click-element primitive on its selectors, social/scroll-carousel through a carousel of three,
 * the wrong-state answers, and that the site saw only trusted clicks and keys.
 */

const world = socialWorld('s', '7');
const { plugin, state, navigate, eventsDuring } = world;
let w: RunningWorker;
let site: SocialSite;
beforeAll(() => {
  w = world.w;
  site = world.site;
});

const openAccount = (body: Body) => plugin('POST', 'open-account', body);
const posts = (body?: Body) => plugin('GET', 'get-posts-profile', body);
const carousel = (direction: string) => plugin('POST', 'scroll-carousel', { direction });

/**
 * What was asked of the site, less what a loaded page asks by itself, at times after the load
 * the navigation waited for (its telemetry, its tray, its icon): a call that moves the page
 * asks more.
 */
const askedOfSite = (site: SocialSite): number =>
  site.seen.filter(
    (r) =>
      !TELEMETRY_PATHS.includes(r.path) &&
      r.path !== '/api/v1/feed/reels_tray/' &&
      r.path !== '/favicon.ico',
  ).length;

test('the four plugins load with their routes and parameters', async () => {
  const r = await w.call<Body>('GET', '/api/v1/plugins', { auth: false });
  const byName = new Map((r.body.plugins as Body[]).map((p) => [p.name, p]));
  expect(byName.get('social/state')).toMatchObject({
    methods: ['GET'],
    route: '/api/v1/{page_id}/plugin/social/state',
    parameters: [],
  });
  expect(
    byName.get('social/open-account')!.parameters.map((p: Body) => [p.name, p.default]),
  ).toEqual([
    ['handle', null],
    ['paste_probability', 0.3],
  ]);
  expect(byName.get('social/get-posts-profile')).toMatchObject({ methods: ['GET'] });
  expect(byName.get('social/scroll-carousel')!.parameters[0]).toMatchObject({
    name: 'direction',
    type: 'select',
    required: true,
    options: ['right', 'left'],
  });
  expect((r.body.skipped as Body[]).filter((s) => s.name.startsWith('social/'))).toEqual([]);
  const docs = await w.call<string>('GET', '/api/v1/plugins/social/state/docs', { auth: false });
  expect(docs.body).toContain('following_open');
});

describe('social/state', () => {
  test('the feed, with the navigation’s own handle and badges', async () => {
    await navigate('/');
    expect(await state()).toMatchObject({
      success: true,
      state: 'feed',
      page_url: `${site.url}/`,
      posts_in_view: { articles: 5 },
      own_handle: 'persona.tester',
      badges: { messages: 3, notifications: 2 },
      handle: null,
      hint: null,
    });
  });

  test('a profile, one’s own profile, a post opened by its address', async () => {
    await navigate('/natgeo/');
    expect(await state()).toMatchObject({
      state: 'profile',
      handle: 'natgeo',
      follow_status: 'following',
      own_profile: false,
      story: { has_story: true },
      posts_in_view: { grid_thumbnails: 5 },
    });
    await navigate('/persona.tester/');
    expect(await state()).toMatchObject({
      state: 'profile',
      handle: 'persona.tester',
      own_profile: true,
      follow_status: 'own_profile',
      posts_in_view: { grid_thumbnails: 1 },
    });
    await navigate('/p/VID1lion/');
    expect(await state()).toMatchObject({
      state: 'post_open',
      handle: 'natgeo',
      author: 'natgeo',
      shortcode: 'VID1lion',
      media_type: 'video',
      liked: false,
      carousel: null,
    });
    await navigate('/p/PIN0natgeo/');
    expect(await state()).toMatchObject({ state: 'post_open', media_type: 'photo', liked: true });
  });

  test('the followers and following lists, the story viewer', async () => {
    await navigate('/natgeo/followers/');
    expect(await state()).toMatchObject({
      state: 'followers_open',
      handle: 'natgeo',
      list: { kind: 'followers', rows_in_view: 5, expected: 283_000_000 },
    });
    await navigate('/natgeo/following/');
    expect(await state()).toMatchObject({
      state: 'following_open',
      list: { kind: 'following', rows_in_view: 2, expected: 155 },
    });
    await navigate('/stories/natgeo/');
    expect(await state()).toMatchObject({ state: 'story_open', story: { handle: 'natgeo' } });
  });

  test('an unknown page answers a hint; state never moves the page', async () => {
    await navigate('/explore/');
    const before = askedOfSite(site);
    const events = await eventsDuring(async () => {
      const s = await state();
      expect(s).toMatchObject({ state: 'unknown', page_url: `${site.url}/explore/` });
      expect(s.hint).toMatch(/social\/go-home/);
    });
    expect(askedOfSite(site)).toBe(before);
    expect(events).toEqual([]);
  });
});

describe('social/open-account', () => {
  test('exact match with @, pasted: the exact handle even when the site lists it second', async () => {
    await navigate('/');
    site.reset();
    const r = await openAccount({ handle: '@natgeo', paste_probability: 1 });
    expect(r.body).toEqual({
      success: true,
      page_id: 's',
      handle: 'natgeo',
      opened_handle: 'natgeo',
      current_handle: 'natgeo',
      current_state: 'profile',
      result_href: `${site.url}/natgeo/`,
      input_method: 'paste',
      navigated_home: false,
      page_url: `${site.url}/natgeo/`,
      message: 'Opened @natgeo',
    });
    // The panel asked the site for what was pasted; the site listed nat.geo.fan first.
    expect(new Set(site.searches)).toEqual(new Set(['natgeo']));
    expect(site.seen.map((s) => s.path)).toContain('/natgeo/');
    expect(site.seen.every((s) => s.session)).toBe(true);
    expect((await state()).handle).toBe('natgeo');
  });

  test('from an open post: closes it first, then a fuzzy search typed key by key', async () => {
    await navigate('/p/CAR3reef/');
    site.reset();
    const events = await eventsDuring(async () => {
      const r = await openAccount({ handle: 'NatGeoFan', paste_probability: 0 });
      expect(r.body).toMatchObject({
        success: true,
        handle: 'natgeofan',
        opened_handle: 'nat.geo.fan',
        current_handle: 'nat.geo.fan',
        current_state: 'profile',
        input_method: 'type',
        navigated_home: false,
        message: 'No exact match for @natgeofan: opened the first result, @nat.geo.fan',
      });
    });
    const clicks = events.filter((e) => e.type === 'click').map((e) => e.target);
    // The dialog's close button, then the navigation's search entry, the input, the result.
    expect(clicks[0]).toBe('Close');
    expect(clicks.indexOf('Close')).toBeLessThan(clicks.indexOf('Search input'));
    const keys = events.filter((e) => e.type === 'keydown' && e.key!.length === 1);
    expect(keys.length).toBeGreaterThanOrEqual('natgeofan'.length);
    expect(site.searches.at(-1)).toBe('natgeofan');
  });

  test('from a page without the navigation (a story): goes home first', async () => {
    await navigate('/stories/natgeo/');
    site.reset();
    const r = await openAccount({ handle: 'travel', paste_probability: 1 });
    expect(r.body).toMatchObject({
      success: true,
      opened_handle: 'travel_daily',
      current_handle: 'travel_daily',
      navigated_home: true,
      current_state: 'profile',
    });
    const pages = site.seen.filter(
      (s) => !s.path.startsWith('/media/') && !s.path.startsWith('/web/'),
    );
    expect(pages.map((s) => s.path)[0]).toBe('/');
  });

  test('an unknown handle: success false saying the site found no account', async () => {
    const r = await openAccount({ handle: 'zzqqxx', paste_probability: 1 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 's',
      error: expect.stringMatching(
        /^Expected search results for @zzqqxx, found "No results found\." .*no account matches @zzqqxx$/,
      ),
    });
    expect(site.searches.at(-1)).toBe('zzqqxx');
  });

  test('a bad handle is a 400 with the parameter’s message, before the page moves', async () => {
    const before = askedOfSite(site);
    const events = await eventsDuring(async () => {
      for (const handle of ['nat geo', 'nat-geo', '@@natgeo']) {
        const r = await openAccount({ handle });
        expect([r.status, r.body]).toEqual([
          400,
          {
            success: false,
            page_id: 's',
            error:
              'handle must be letters, digits, dots or underscores, with an optional leading @',
          },
        ]);
      }
      const missing = await openAccount({});
      expect(missing.status).toBe(400);
      const odds = await openAccount({ handle: 'natgeo', paste_probability: 2 });
      expect(odds.status).toBe(400);
    });
    expect(askedOfSite(site)).toBe(before);
    expect(events).toEqual([]);
  });
});

describe('social/get-posts-profile and social/scroll-carousel', () => {
  test('lists the grid in page order: pinned first, media types, captions or null', async () => {
    await navigate('/natgeo/');
    const r = await posts();
    expect(r.body).toMatchObject({
      success: true,
      handle: 'natgeo',
      count: 5,
      page_url: `${site.url}/natgeo/`,
    });
    const rows = (r.body.posts as Body[]).map((p) => [
      p.index,
      p.shortcode,
      p.media_type,
      p.pinned,
      p.caption,
    ]);
    expect(rows).toEqual([
      [1, 'PIN0natgeo', 'photo', true, 'Our best photo of the year'],
      [2, 'CAR3reef', 'carousel', false, 'Three views of the reef'],
      [3, 'VID1lion', 'video', false, 'A lion at dawn'],
      [4, 'REEL1lens', 'reel', false, 'Behind the lens'],
      [5, 'NOCAP1', 'photo', false, null],
    ]);
    expect(r.body.posts[1]).toMatchObject({
      href: `${site.url}/p/CAR3reef/`,
      selector: 'a[href="/p/CAR3reef/"]',
    });
    expect(r.body.posts[3].selector).toBe('a[href="/reel/REEL1lens/"]');
  });

  test('a shortcode filter: the one post, or shortcode_not_in_view', async () => {
    const one = await posts({ shortcode: 'VID1lion' });
    expect(one.body).toMatchObject({ success: true, count: 1, posts: [{ index: 3 }] });
    const gone = await posts({ shortcode: 'NOPE123' });
    expect([gone.status, gone.body]).toEqual([
      200,
      {
        success: false,
        debug_id: expect.any(String),
        page_id: 's',
        error: 'shortcode_not_in_view',
      },
    ]);
    const q = await posts({ shortcode: 'NOCAP1' });
    expect(q.body).toMatchObject({ count: 1, posts: [{ caption: null }] });
  });

  test('scroll-carousel on a profile: wrong state, with the way to post_open', async () => {
    const r = await carousel('right');
    expect(r.body.success).toBe(false);
    expect(r.body.error).toMatch(/^Expected state post_open, found state profile at .*open a post/);
    expect(r.body).toMatchObject({ state: 'profile', hint: expect.stringMatching(/open a post/) });
    const bad = await carousel('up');
    expect(bad.status).toBe(400);
  });

  test('the selector opens the post with click-element; the carousel steps right and left', async () => {
    const listed = (await posts({ shortcode: 'CAR3reef' })).body.posts[0] as Body;
    const before = site.seen.length;
    const clickEvents = await eventsDuring(async () => {
      const click = await w.call<Body>('POST', '/api/v1/primitive/s/click-element', {
        body: { selector: listed.selector },
      });
      expect(click.body.success).toBe(true);
    });
    expect(clickEvents.filter((e) => e.type === 'click').map((e) => e.path)).toEqual(['/natgeo/']);
    // The dialog opened over the profile by pushState: no page load.
    expect(site.seen.slice(before).filter((s) => s.path.startsWith('/p/'))).toEqual([]);
    expect(await state()).toMatchObject({
      state: 'post_open',
      page_url: `${site.url}/p/CAR3reef/`,
      handle: 'natgeo',
      author: 'natgeo',
      shortcode: 'CAR3reef',
      media_type: 'photo',
      carousel: { img_index: 1, has_previous: false },
    });

    const steps: Body[] = [];
    for (const d of ['right', 'right', 'right', 'left', 'left', 'left']) {
      const r = await carousel(d);
      expect(r.body.success).toBe(true);
      steps.push(r.body);
    }
    const seen = steps.map((s) => [
      s.direction,
      s.moved,
      s.position,
      s.total_media,
      s.current_media_type,
      s.has_previous,
      s.has_next,
    ]);
    expect(seen).toEqual([
      ['right', true, 2, 3, 'video', true, true],
      ['right', true, 3, 3, 'img', true, false],
      ['right', false, 3, 3, 'img', true, false],
      ['left', true, 2, 3, 'video', true, true],
      ['left', true, 1, 3, 'img', false, true],
      ['left', false, 1, 3, 'img', false, true],
    ]);
    expect(steps[2]!.message).toMatch(/^Already at the last media/);
    expect(steps[0]!.page_url).toBe(`${site.url}/p/CAR3reef/`);
    await carousel('right');
    expect(await state()).toMatchObject({
      media_type: 'video',
      carousel: { img_index: 2, has_previous: true },
    });
  });

  test('get-posts-profile with a post open: wrong state, with the way to profile', async () => {
    const r = await posts();
    expect(r.body.success).toBe(false);
    expect(r.body.error).toMatch(
      /^Expected state profile, found state post_open at .*open a profile first with social\/open-account$/,
    );
    expect(r.body).toMatchObject({
      state: 'post_open',
      hint: 'open a profile first with social/open-account',
    });
  });
});

describe('the login wall', () => {
  afterAll(() => site.setLoggedIn(true));

  test('state says so; open-account answers that the persona must log in', async () => {
    site.setLoggedIn(false);
    await navigate('/');
    const s = await state();
    expect(s).toMatchObject({ state: 'unknown' });
    expect(s.page_url).toMatch(/\/accounts\/login\/\?next=/);
    expect(s.hint).toMatch(/log in through the live view/);
    const r = await openAccount({ handle: 'natgeo' });
    expect(r.body).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 's',
      error: expect.stringMatching(
        /^Expected a logged-in page of the site, found the login wall at .*log in through the live view$/,
      ),
    });
  });
});

test('the site saw only trusted clicks and key presses', () => {
  const clicks = site.events.filter((e) => e.type === 'click');
  const keys = site.events.filter((e) => e.type === 'keydown');
  expect(clicks.length).toBeGreaterThan(10);
  expect(keys.length).toBeGreaterThan(5);
  expect(site.events.filter((e) => !e.trusted)).toEqual([]);
});
