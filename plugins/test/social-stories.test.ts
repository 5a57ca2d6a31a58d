import type { SocialSite } from './fixtures/social-site';
import type { Body } from './fixtures/social-world';
import { clicks, escapes, socialWorld, trustedInputOnly } from './fixtures/social-world';

/**
 * The story and navigation plugins of the social family against the stand-in for Instagram:
 * social/open-story and social/close-story (button and Escape), social/go-home from every kind
 * of page, the wrong-state answers, the login wall, and that the site saw only trusted input,
 * with the control that shows the check failing.
 */

const world = socialWorld('s', '12');
const { post, state, navigate, eventsDuring, pagesDuring } = world;
let site: SocialSite;
beforeAll(() => {
  site = world.site;
});
const trusted = trustedInputOnly(world);

describe('social/open-story and social/close-story', () => {
  test('the ring opens the viewer; its Close button closes it (escape_probability 0)', async () => {
    await navigate('/natgeo/');
    let opened: Body = {};
    const events = await eventsDuring(
      async () => (opened = await post('open-story', { handle: 'natgeo' })),
    );
    expect(clicks(events).map((e) => [e.target, e.path])).toEqual([['story ring', '/natgeo/']]);
    expect(opened).toEqual({
      success: true,
      page_id: 's',
      handle: 'natgeo',
      state: 'story_open',
      method: 'profile_ring',
      page_url: `${site.url}/stories/natgeo/`,
      message: 'The story viewer is open on @natgeo; close it with social/close-story',
    });
    let closed: Body = {};
    const closing = await eventsDuring(
      async () => (closed = await post('close-story', { escape_probability: 0 })),
    );
    expect(clicks(closing).map((e) => [e.target, e.path])).toEqual([['Close', '/stories/natgeo/']]);
    expect(escapes(closing)).toEqual([]);
    expect(closed).toEqual({
      success: true,
      page_id: 's',
      handle: 'natgeo',
      state: 'profile',
      method: 'button',
      page_url: `${site.url}/natgeo/`,
      message: 'Closed the story viewer on @natgeo with its Close button; now in state profile',
    });
  });

  test('Escape closes it (escape_probability 1): a trusted keydown, no click', async () => {
    await navigate('/natgeo/');
    expect(await post('open-story')).toMatchObject({ success: true, state: 'story_open' });
    let closed: Body = {};
    const events = await eventsDuring(
      async () => (closed = await post('close-story', { escape_probability: 1 })),
    );
    expect(clicks(events)).toEqual([]);
    expect(escapes(events).map((e) => [e.trusted, e.path])).toEqual([[true, '/stories/natgeo/']]);
    expect(closed).toMatchObject({ success: true, method: 'escape', state: 'profile' });
    expect((await state()).state).toBe('profile');
  });

  test('no ring, another handle, the wrong state', async () => {
    await navigate('/natgeo/');
    const closeFirst = await post('close-story');
    expect(closeFirst.error).toMatch(
      /^Expected state story_open, found state profile at .*; open a story first with social\/open-story$/,
    );
    const other = await post('open-story', { handle: 'travel_daily' });
    expect(other.error).toMatch(
      /^Expected the profile of @travel_daily, found the profile of @natgeo/,
    );
    await navigate('/nat.geo.fan/');
    const none = await post('open-story');
    expect(none.error).toMatch(/found none at .*: @nat\.geo\.fan has no story to watch now$/);
    expect((await state()).state).toBe('profile');
  });
});

describe('social/go-home', () => {
  test('from a post dialog: its close button, then Home', async () => {
    await navigate('/p/CAR3reef/');
    let r: Body = {};
    const events = await eventsDuring(
      async () => (r = await post('go-home', { escape_probability: 0 })),
    );
    // The dialog's close button, then Home (its icon or its label) on the profile behind.
    expect(clicks(events).map((e) => [e.target, e.path])).toEqual([
      ['Close', '/p/CAR3reef/'],
      [expect.stringMatching(/^(Home|A)$/), '/natgeo/'],
    ]);
    expect(r).toEqual({
      success: true,
      page_id: 's',
      from_state: 'post_open',
      state: 'feed',
      steps: ['closed the open post with its close button', 'clicked Home in the left navigation'],
      page_url: `${site.url}/`,
      message:
        'Closed the open post with its close button, then clicked Home in the left navigation',
    });
  });

  test('from a list: Escape, then Home', async () => {
    await navigate('/wanderer.jo/');
    expect(await post('open-following')).toMatchObject({ success: true });
    let r: Body = {};
    const events = await eventsDuring(
      async () => (r = await post('go-home', { escape_probability: 1 })),
    );
    expect(escapes(events).map((e) => e.trusted)).toEqual([true]);
    expect(clicks(events).map((e) => e.path)).toEqual(['/wanderer.jo/']);
    expect(r).toMatchObject({
      success: true,
      from_state: 'following_open',
      state: 'feed',
      steps: ['closed the following list with Escape', 'clicked Home in the left navigation'],
    });
  });

  test('from a story over a profile, and from a story’s own page', async () => {
    await navigate('/natgeo/');
    expect(await post('open-story')).toMatchObject({ success: true });
    const r = await post('go-home', { escape_probability: 1 });
    expect(r).toMatchObject({
      success: true,
      from_state: 'story_open',
      steps: ['closed the story viewer with Escape', 'clicked Home in the left navigation'],
    });
    // Its own page has no navigation; its Close link leads to the feed.
    await navigate('/stories/natgeo/');
    const own = await post('go-home', { escape_probability: 0 });
    expect(own).toMatchObject({
      success: true,
      from_state: 'story_open',
      state: 'feed',
      steps: ['closed the story viewer with its close button'],
      page_url: `${site.url}/`,
    });
  });

  test('from an unknown page: Home where the navigation shows, else the site’s address', async () => {
    await navigate('/explore/');
    expect((await state()).hint).toMatch(/social\/go-home/);
    expect(await post('go-home')).toMatchObject({
      success: true,
      from_state: 'unknown',
      steps: ['clicked Home in the left navigation'],
    });
    await navigate('/no/such/page/');
    expect((await state()).hint).toMatch(/social\/go-home/);
    let r: Body = {};
    const pages = await pagesDuring(async () => {
      const events = await eventsDuring(async () => (r = await post('go-home')));
      expect(events.filter((e) => e.path !== '/')).toEqual([]);
    });
    expect(r).toMatchObject({
      success: true,
      from_state: 'unknown',
      state: 'feed',
      steps: [`navigated to ${site.url}/`],
    });
    expect(pages).toEqual(['/']);
    // On the feed already: nothing to do.
    const again = await eventsDuring(async () =>
      expect(await post('go-home')).toMatchObject({ success: true, steps: [] }),
    );
    expect(again).toEqual([]);
  });
});

describe('the login wall', () => {
  afterAll(() => site.setLoggedIn(true));

  test('go-home and open-own-profile say the persona must log in through the live view', async () => {
    site.setLoggedIn(false);
    await navigate('/');
    for (const name of ['go-home', 'open-own-profile']) {
      const r = await post(name);
      expect(r).toEqual({
        success: false,
        debug_id: expect.any(String),
        page_id: 's',
        error: expect.stringMatching(
          /^Expected a logged-in page of the site, found the login wall at .*log in through the live view$/,
        ),
        state: 'unknown',
        hint: 'log in through the live view',
      });
    }
    expect((await state()).state).toBe('unknown');
  });
});

test('the site saw only trusted clicks and key presses, Escape among them', async () => {
  // Input of its own, so that the check after each test has something to hold.
  await navigate('/natgeo/');
  expect(await post('open-story')).toMatchObject({ success: true, state: 'story_open' });
  const events = await eventsDuring(() => post('close-story', { escape_probability: 1 }));
  const seen = trusted.since();
  expect(clicks(seen).length).toBeGreaterThan(0);
  expect(escapes(events).length).toBe(1);
  expect(seen.filter((e) => !e.trusted)).toEqual([]);
});

test('control: a click the page makes by script is seen, and seen as untrusted', async () => {
  // From another document: a fragment added to the page already open would not load it again.
  await navigate('/');
  await navigate('/natgeo/#synthetic-click');
  const untrusted = trusted.since().filter((e) => !e.trusted);
  expect(untrusted.map((e) => [e.type, e.target, e.path])).toEqual([['click', 'BODY', '/natgeo/']]);
  // Shown: the check after each test would fail on it. Not this test's input to judge.
  trusted.forget();
});
