import type { RunningWorker } from '@persona-browser/testkit/worker';
import type { SeenEvent, SocialSite } from './fixtures/social-site';
import { OWN } from './fixtures/social-site';
import type { Body } from './fixtures/social-world';
import { clicks, socialWorld, trustedInputOnly } from './fixtures/social-world';

/**
 * The people plugins of the social family against the stand-in for Instagram: the family's
 * plugins and their parameters, social/open-own-profile, social/follow (public, private,
 * already following, one's own), social/get-profile-info and the following/followers lists
 * (open, read, scroll for more), with their wrong-state answers; the site saw only trusted
 * input (the check's control is in social-stories.test.ts).
 */

const world = socialWorld('s', '11');
const { plugin, post, get, state, navigate, eventsDuring, pagesDuring } = world;
let w: RunningWorker;
let site: SocialSite;
beforeAll(() => {
  w = world.w;
  site = world.site;
});
trustedInputOnly(world);

/** The follow button `handle`'s profile shows from its next load: a test's starting state. */
function followButton(handle: string, button: 'Follow' | 'Following' | 'Requested'): void {
  const account = site.accounts.get(handle);
  if (!account) throw new Error(`the site has no account ${handle}`);
  account.button = button;
}

const NAMES = [
  'open-own-profile',
  'follow',
  'get-profile-info',
  'open-following',
  'get-following',
  'open-followers',
  'get-followers',
  'open-story',
  'close-story',
  'go-home',
];

test('the ten plugins load with their methods and parameters; bad values are a 400', async () => {
  const r = await w.call<Body>('GET', '/api/v1/plugins', { auth: false });
  const byName = new Map((r.body.plugins as Body[]).map((p) => [p.name, p]));
  const methods = NAMES.map((n) => [n, byName.get(`social/${n}`)?.methods]);
  expect(methods).toEqual(NAMES.map((n) => [n, /^get-/.test(n) ? ['GET'] : ['POST']]));
  expect((r.body.skipped as Body[]).filter((s) => s.name.startsWith('social/'))).toEqual([]);
  expect(byName.get('social/get-following')!.parameters[0]).toMatchObject({
    name: 'scrolls',
    type: 'number',
    default: 0,
  });
  expect(byName.get('social/close-story')!.parameters[0]).toMatchObject({
    name: 'escape_probability',
    default: 0.5,
  });
  const docs = await w.call<string>('GET', '/api/v1/plugins/social/get-following/docs', {
    auth: false,
  });
  expect(docs.body).toContain('Why GET, even with scrolls');

  await navigate('/wanderer.jo/');
  let events: SeenEvent[] = [];
  const seenAt = site.seen.length;
  const pages = await pagesDuring(async () => {
    events = await eventsDuring(async () => {
      for (const scrolls of [1.5, 21, -1]) {
        const bad = await plugin('GET', 'get-following', { scrolls });
        expect([bad.status, bad.body.error]).toEqual([
          400,
          'scrolls must be a whole number from 0 to 20',
        ]);
      }
      expect((await plugin('POST', 'close-story', { escape_probability: 2 })).status).toBe(400);
      expect((await plugin('POST', 'follow', { handle: 'no way' })).status).toBe(400);
    });
  });
  // Nothing loaded, fetched or clicked: the 400s came before the page was touched.
  expect(pages).toEqual([]);
  expect(site.seen.slice(seenAt).filter((s) => s.path.startsWith('/api/'))).toEqual([]);
  expect(events).toEqual([]);
});

describe('social/open-own-profile', () => {
  test('from the feed: a click on the navigation’s profile picture', async () => {
    await navigate('/');
    let r: Body = {};
    const pages = await pagesDuring(async () => {
      const events = await eventsDuring(async () => (r = await post('open-own-profile')));
      expect(clicks(events).map((e) => [e.target, e.path])).toEqual([['A', '/']]);
    });
    expect(r).toEqual({
      success: true,
      page_id: 's',
      handle: OWN,
      state: 'profile',
      page_url: `${site.url}/${OWN}/`,
      message: `Opened your own profile @${OWN}`,
    });
    expect(pages).toEqual([`/${OWN}/`]);
    expect(await state()).toMatchObject({ state: 'profile', own_profile: true });
  });

  test('from an open post: its close button first', async () => {
    await navigate('/p/CAR3reef/');
    let r: Body = {};
    const events = await eventsDuring(async () => (r = await post('open-own-profile')));
    expect(clicks(events).map((e) => e.target)).toEqual(['Close', 'A']);
    expect(r).toMatchObject({
      success: true,
      handle: OWN,
      message: `Closed the open post, then opened your own profile @${OWN}`,
    });
  });

  test('a page without the navigation: success false, pointing to social/go-home', async () => {
    await navigate('/stories/natgeo/');
    const r = await post('open-own-profile');
    expect(r).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 's',
      error: expect.stringMatching(
        /^Expected a page with the site's left navigation, found state story_open at .*go to the feed first with social\/go-home$/,
      ),
      state: 'story_open',
      hint: 'go to the feed first with social/go-home',
    });
  });
});

describe('social/follow', () => {
  test('a public account: Follow turns to Following, the site saw one follow', async () => {
    followButton('wanderer.jo', 'Follow');
    await navigate('/wanderer.jo/');
    site.follows.length = 0;
    let r: Body = {};
    const events = await eventsDuring(
      async () => (r = await post('follow', { handle: '@wanderer.jo' })),
    );
    expect(r).toEqual({
      success: true,
      page_id: 's',
      handle: 'wanderer.jo',
      follow_status_before: 'not_following',
      follow_status: 'following',
      changed: true,
      page_url: `${site.url}/wanderer.jo/`,
      message: 'Now following @wanderer.jo',
    });
    expect(clicks(events).map((e) => [e.target, e.trusted])).toEqual([['BUTTON', true]]);
    expect(site.follows).toEqual(['wanderer.jo']);
    expect(await state()).toMatchObject({ follow_status: 'following' });
  });

  test('a private account: Follow turns to Requested', async () => {
    followButton('quiet.fox', 'Follow');
    await navigate('/quiet.fox/');
    site.follows.length = 0;
    const r = await post('follow');
    expect(r).toMatchObject({
      success: true,
      handle: 'quiet.fox',
      follow_status_before: 'not_following',
      follow_status: 'requested',
      changed: true,
      message: 'Asked to follow @quiet.fox: a private account, the request is pending',
    });
    expect(site.follows).toEqual(['quiet.fox']);
    // A second call: the request is pending, nothing is clicked.
    const again = await post('follow');
    expect(again).toMatchObject({ success: true, follow_status: 'requested', changed: false });
    expect(site.follows).toEqual(['quiet.fox']);
  });

  test('already following: success, changed false, no click, no request', async () => {
    await navigate('/natgeo/');
    site.follows.length = 0;
    let r: Body = {};
    const events = await eventsDuring(async () => (r = await post('follow', { handle: 'natgeo' })));
    expect(r).toMatchObject({
      success: true,
      follow_status_before: 'following',
      follow_status: 'following',
      changed: false,
      message: 'Already following @natgeo: nothing clicked',
    });
    expect(events).toEqual([]);
    expect(site.follows).toEqual([]);
  });

  test('one’s own profile, another handle than the one on screen, the wrong state', async () => {
    await navigate(`/${OWN}/`);
    const own = await post('follow');
    expect(own).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 's',
      error: `Expected the profile of another account, found your own profile @${OWN} at ${site.url}/${OWN}/: a persona cannot follow itself`,
    });
    await navigate('/travel_daily/');
    const events = await eventsDuring(async () => {
      const other = await post('follow', { handle: 'natgeo' });
      expect(other.error).toMatch(
        /^Expected the profile of @natgeo, found the profile of @travel_daily/,
      );
    });
    expect(events).toEqual([]);
    await navigate('/');
    const wrong = await post('follow');
    expect(wrong.error).toMatch(
      /^Expected state profile, found state feed at .*; open a profile first with social\/open-account$/,
    );
    expect(site.follows).toEqual([]);
  });
});

describe('social/get-profile-info', () => {
  test('name, bio, links through the shim, counts as numbers, badge, follow status', async () => {
    await navigate('/natgeo/');
    expect(await get('get-profile-info')).toEqual({
      success: true,
      page_id: 's',
      handle: 'natgeo',
      name: 'National Geographic',
      bio: 'Experience the world through the eyes of our photographers.',
      links: [{ text: 'natgeo.com/explore', href: 'https://www.nationalgeographic.com/explore' }],
      counts: { posts: 5, followers: 283_000_000, following: 155 },
      verified: true,
      is_private: false,
      follow_status: 'following',
      own_profile: false,
      has_story: true,
      page_url: `${site.url}/natgeo/`,
      message: '@natgeo (verified): 283000000 followers',
    });
  });

  test('"1.2K" and "12,345"; no bio; a private account; the wrong state', async () => {
    await navigate('/nat.geo.fan/');
    expect(await get('get-profile-info')).toMatchObject({
      name: 'Nat Geo Fan',
      bio: null,
      links: [],
      counts: { posts: 3, followers: 1200, following: 301 },
      verified: false,
      follow_status: 'not_following',
    });
    followButton('quiet.fox', 'Requested');
    await navigate('/quiet.fox/');
    expect(await get('get-profile-info')).toMatchObject({
      counts: { posts: 0, followers: 12_345, following: 8 },
      is_private: true,
      follow_status: 'requested',
    });
    await navigate('/p/VID1lion/');
    const r = await get('get-profile-info');
    expect(r.error).toMatch(
      /^Expected state profile, found state post_open at .*social\/open-account$/,
    );
  });
});

describe('the following and followers lists', () => {
  const expectRows = (rows: Body[], kind: 'following' | 'followers', n: number) => {
    const truth = site.listOf('wanderer.jo', kind).slice(0, n);
    const statuses: Record<string, string> = {
      Follow: 'not_following',
      Following: 'following',
      Requested: 'requested',
    };
    expect(rows.map((r) => [r.index, r.handle, r.name, r.follow_status, r.is_own])).toEqual(
      truth.map((t, i) => [
        i + 1,
        t.handle,
        t.name,
        t.button ? statuses[t.button] : null,
        t.handle === OWN,
      ]),
    );
  };

  test('open-following: a click on the header’s count opens the dialog by pushState', async () => {
    await navigate('/wanderer.jo/');
    let r: Body = {};
    const pages = await pagesDuring(async () => {
      const events = await eventsDuring(async () => (r = await post('open-following')));
      expect(clicks(events).map((e) => [e.target, e.path])).toEqual([['A', '/wanderer.jo/']]);
    });
    expect(pages).toEqual([]);
    expect(r).toEqual({
      success: true,
      page_id: 's',
      kind: 'following',
      handle: 'wanderer.jo',
      rows_in_view: 12,
      expected: 40,
      page_url: `${site.url}/wanderer.jo/following/`,
      message: 'The following list of @wanderer.jo is open with 12 row(s) rendered of 40',
    });
    expect(await state()).toMatchObject({
      state: 'following_open',
      list: { kind: 'following', rows_in_view: 12, expected: 40 },
    });
  });

  test('get-following: the rows in order; scrolls load more, up to the whole list', async () => {
    await navigate('/wanderer.jo/');
    expect(await post('open-following')).toMatchObject({ success: true });
    const first = await get('get-following');
    expect(first).toMatchObject({
      success: true,
      count: 12,
      expected: 40,
      complete: false,
      scrolls: 0,
    });
    expectRows(first.rows, 'following', 12);
    expect(first.rows[5]).toMatchObject({ handle: OWN, follow_status: null, is_own: true });
    expect(first.rows[2]).toMatchObject({ handle: 'natgeo', follow_status: 'following' });

    const loads = () =>
      site.seen.filter((s) => s.path === '/api/v1/friendships/wanderer.jo/following/').length;
    const loadsBefore = loads();
    const more = await get('get-following', { scrolls: 1 });
    expect(more.count).toBeGreaterThan(12);
    expect(more.scrolls).toBe(1);
    expectRows(more.rows, 'following', more.count);
    expect(loads()).toBeGreaterThan(loadsBefore);

    const all = await get('get-following', { scrolls: 6 });
    expect(all).toMatchObject({ count: 40, expected: 40, complete: true });
    expectRows(all.rows, 'following', 40);
    expect(all.message).toMatch(
      /^40 row\(s\) of @wanderer\.jo's following list rendered of 40 after \d scroll/,
    );
    expect(all.page_url).toBe(`${site.url}/wanderer.jo/following/`);
  });

  test('wrong states: get-followers on the following list, open-following on a list', async () => {
    await navigate('/wanderer.jo/');
    expect(await post('open-following')).toMatchObject({ success: true });
    const r = await get('get-followers');
    expect(r.error).toMatch(
      /^Expected state followers_open, found state following_open at .*; open the list first with social\/open-followers$/,
    );
    expect(r).toMatchObject({
      success: false,
      state: 'following_open',
      hint: 'open the list first with social/open-followers',
    });
    const o = await post('open-following');
    expect(o.error).toMatch(/^Expected state profile, found state following_open at /);
  });

  test('a list’s own address renders its first rows, as social.test.ts expects', async () => {
    await navigate('/natgeo/followers/');
    expect(await state()).toMatchObject({
      state: 'followers_open',
      list: { kind: 'followers', rows_in_view: 5, expected: 283_000_000 },
    });
    const rows = await get('get-followers');
    expect(rows).toMatchObject({ count: 5, expected: 283_000_000, complete: false });
    expect(rows.rows.map((r: Body) => r.handle)).toEqual(
      site.listOf('natgeo', 'followers').map((r) => r.handle),
    );
    await navigate('/natgeo/following/');
    expect((await get('get-following')).count).toBe(2);
  });

  test('open-followers and get-followers with scrolls: all 25', async () => {
    await navigate('/wanderer.jo/');
    const opened = await post('open-followers');
    expect(opened).toMatchObject({
      success: true,
      kind: 'followers',
      rows_in_view: 12,
      expected: 25,
    });
    const rows = await get('get-followers', { scrolls: 4 });
    expect(rows).toMatchObject({ success: true, count: 25, complete: true });
    expectRows(rows.rows, 'followers', 25);
    const wrong = await get('get-following');
    expect(wrong.error).toMatch(/social\/open-following$/);
  });
});
