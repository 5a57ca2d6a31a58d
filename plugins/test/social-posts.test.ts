import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY } from '@persona-browser/testkit/worker';
import type { SocialSite } from './fixtures/social-site';
import { TELEMETRY_PATHS, mediaFile } from './fixtures/social-site';
import type { Body } from './fixtures/social-world';
import { socialWorld } from './fixtures/social-world';

/**
 * The post plugins of the social family against the stand-in for Instagram:
 * social/get-posts-feed, social/open-post (from a profile's grid and from the feed),
 * social/get-post-metadata, social/download-post-media (bytes through one-shot media links)
 * and social/close-post (Escape and the close button); the whole chain from open-account to
 * go-home; the wrong-state answers; and that the site saw only trusted input.
 */

const world = socialWorld('p', '5');
const { plugin, post, get, state, navigate, eventsDuring } = world;
let w: RunningWorker;
let site: SocialSite;
beforeAll(() => {
  w = world.w;
  site = world.site;
});

/** A media link's download, as raw bytes. */
async function download(mediaUrl: string) {
  const res = await fetch(w.url + mediaUrl, { headers: { authorization: `Bearer ${KEY}` } });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    disposition: res.headers.get('content-disposition'),
    bytes: Buffer.from(await res.arrayBuffer()),
  };
}

const NAMES = [
  'get-posts-feed',
  'open-post',
  'get-post-metadata',
  'download-post-media',
  'close-post',
];

test('the five post plugins load with their methods; a bad shortcode is a 400', async () => {
  const r = await w.call<Body>('GET', '/api/v1/plugins', { auth: false });
  const byName = new Map((r.body.plugins as Body[]).map((p) => [p.name, p]));
  expect(NAMES.map((n) => [n, byName.get(`social/${n}`)?.methods])).toEqual([
    ['get-posts-feed', ['GET']],
    ['open-post', ['POST']],
    ['get-post-metadata', ['GET']],
    ['download-post-media', ['POST']],
    ['close-post', ['POST']],
  ]);
  expect(byName.get('social/open-post')!.parameters[0]).toMatchObject({
    name: 'shortcode',
    required: true,
  });
  const bad = await plugin('POST', 'open-post', { shortcode: 'no/way' });
  expect([bad.status, bad.body.error]).toEqual([
    400,
    'shortcode must be letters, digits, hyphens or underscores',
  ]);
  expect((await plugin('POST', 'open-post', {})).status).toBe(400);
  const docs = await w.call<string>('GET', '/api/v1/plugins/social/download-post-media/docs', {
    auth: false,
  });
  expect(docs.body).toContain('blob:');
});

describe('social/get-posts-feed', () => {
  test('the feed’s posts in page order, with author, kind, date and a selector', async () => {
    await navigate('/');
    const r = await get('get-posts-feed');
    expect(r.success).toBe(true);
    expect(
      (r.posts as Body[]).map((p) => [p.index, p.author, p.shortcode, p.media_type, p.caption]),
    ).toEqual([
      [1, 'natgeo', 'PIN0natgeo', 'photo', 'Our best photo of the year'],
      [2, 'natgeo', 'CAR3reef', 'carousel', 'Three views of the reef'],
      [3, 'natgeo', 'VID1lion', 'video', null],
      [4, 'nat.geo.fan', 'FAN1', 'photo', 'Fan art'],
      [5, 'travel_daily', 'TRV1', 'photo', 'Lisbon'],
    ]);
    expect(r.posts[1]).toEqual({
      index: 2,
      author: 'natgeo',
      shortcode: 'CAR3reef',
      href: `${site.url}/p/CAR3reef/`,
      selector: 'a[href="/p/CAR3reef/"]',
      media_type: 'carousel',
      caption: 'Three views of the reef',
      date: '2026-11-20T08:15:00.000Z',
    });
    // The selector is exact: click-element opens that very post.
    const clicked = await w.call<Body>('POST', '/api/v1/primitive/p/click-element', {
      body: { selector: r.posts[0].selector },
    });
    expect(clicked.body).toMatchObject({ success: true });
    for (let i = 0; i < 50 && (await state()).state !== 'post_open'; i += 1) {
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(await state()).toMatchObject({ state: 'post_open', shortcode: 'PIN0natgeo' });
  });

  test('one shortcode; one not in view; the wrong state', async () => {
    await navigate('/');
    const one = await get('get-posts-feed', { shortcode: 'TRV1' });
    expect(one).toMatchObject({
      success: true,
      count: 1,
      posts: [{ index: 5, author: 'travel_daily' }],
    });
    expect(await get('get-posts-feed', { shortcode: 'TRV2' })).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'p',
      error: 'shortcode_not_in_view',
    });
    await navigate('/natgeo/');
    expect(await get('get-posts-feed')).toMatchObject({
      success: false,
      state: 'profile',
      hint: 'go to the feed first with social/go-home',
    });
  });
});

describe('the chain: open-account → get-posts-profile → open-post → scroll-carousel → metadata → download → close-post → go-home', () => {
  test('every step with human input, the media bytes exactly as the site served them', async () => {
    await navigate('/');
    const seenBefore = site.seen.length;
    const events = await eventsDuring(async () => {
      const opened = await post('open-account', { handle: '@natgeo', paste_probability: 0 });
      expect(opened).toMatchObject({
        success: true,
        current_handle: 'natgeo',
        current_state: 'profile',
      });

      const grid = await get('get-posts-profile', { shortcode: 'CAR3reef' });
      expect(grid).toMatchObject({ success: true, posts: [{ media_type: 'carousel' }] });

      expect(await post('open-post', { shortcode: 'CAR3reef' })).toEqual({
        success: true,
        page_id: 'p',
        shortcode: 'CAR3reef',
        author: 'natgeo',
        from_state: 'profile',
        state: 'post_open',
        media_type: 'carousel',
        total_media: 3,
        page_url: `${site.url}/p/CAR3reef/`,
        message: 'Opened carousel CAR3reef by @natgeo with 3 media',
      });
      // Asked again while it is open: nothing to click.
      expect(await post('open-post', { shortcode: 'CAR3reef' })).toMatchObject({
        success: true,
        message: 'Already open: carousel CAR3reef by @natgeo with 3 media',
      });

      expect(await post('scroll-carousel', { direction: 'right' })).toMatchObject({
        moved: true,
        position: 2,
        current_media_type: 'video',
      });

      expect(await get('get-post-metadata')).toEqual({
        success: true,
        page_id: 'p',
        author: 'natgeo',
        shortcode: 'CAR3reef',
        url: `${site.url}/p/CAR3reef/`,
        media_type: 'carousel',
        date: '2026-11-20T08:15:00.000Z',
        caption: 'Three views of the reef',
        likes: 12345,
        likes_text: '12,345 likes',
        views: null,
        views_text: null,
        liked: false,
        location: {
          name: 'Great Barrier Reef',
          href: `${site.url}/explore/locations/213385402/`,
        },
        tagged: ['bo_lee', 'cy.walks'],
        media: [
          { position: 1, type: 'img', url: `${site.url}/media/CAR3reef-0.svg` },
          { position: 2, type: 'video', url: `${site.url}/media/CAR3reef-1.mp4` },
          { position: 3, type: 'img', url: `${site.url}/media/CAR3reef-2.svg` },
        ],
        page_url: `${site.url}/p/CAR3reef/`,
        message:
          'carousel CAR3reef by @natgeo posted 2026-11-20T08:15:00.000Z, 3 media, 12,345 likes at Great Barrier Reef',
      });

      const dl = await post('download-post-media');
      expect(dl).toMatchObject({
        success: true,
        shortcode: 'CAR3reef',
        author: 'natgeo',
        count: 3,
        skipped: [],
      });
      const paths = ['/media/CAR3reef-0.svg', '/media/CAR3reef-1.mp4', '/media/CAR3reef-2.svg'];
      for (const [i, f] of (dl.files as Body[]).entries()) {
        const served = mediaFile(paths[i] as string);
        expect(f).toMatchObject({
          position: i + 1,
          type: i === 1 ? 'video' : 'img',
          filename: `natgeo_CAR3reef_${i + 1}.${i === 1 ? 'mp4' : 'svg'}`,
          content_type: served.type,
          size_bytes: served.bytes.length,
          source_url: `${site.url}${paths[i]}`,
        });
        const first = await download(f.media_url as string);
        expect(first.status).toBe(200);
        expect(first.type).toBe(served.type);
        expect(first.disposition).toContain(`filename="natgeo_CAR3reef_${i + 1}`);
        expect(first.bytes.equals(served.bytes)).toBe(true);
        // One download only.
        const second = await download(f.media_url as string);
        expect(second.status).toBe(404);
      }

      const closed = await post('close-post', { escape_probability: 1 });
      expect(closed).toMatchObject({
        success: true,
        shortcode: 'CAR3reef',
        state: 'profile',
        method: 'escape',
        page_url: `${site.url}/natgeo/`,
      });
      expect(await post('go-home', { escape_probability: 0 })).toMatchObject({
        success: true,
        state: 'feed',
      });
    });
    // Every click and key the site saw was the browser's own; the post opened with a click on
    // its tile, the carousel moved with Next, Escape closed it, Home led back.
    expect(events.length).toBeGreaterThan(0);
    expect(events.filter((e) => !e.trusted)).toEqual([]);
    const clicked = events.filter((e) => e.type === 'click').map((e) => e.target);
    expect(clicked).toEqual(expect.arrayContaining(['A', 'Next']));
    expect(events.filter((e) => e.type === 'keydown' && e.key === 'Escape')).toHaveLength(1);
    // The media the site served went to the browser with the persona's session cookie.
    const media = site.seen.slice(seenBefore).filter((s) => s.path.startsWith('/media/CAR3reef'));
    expect(media.length).toBeGreaterThan(0);
    expect(media.every((s) => s.session)).toBe(true);
  });
});

describe('from the feed, and the close button', () => {
  test('open-post clicks the feed post’s link; a video’s views; the file downloads', async () => {
    await navigate('/');
    let opened: Body = {};
    const events = await eventsDuring(async () => {
      opened = await post('open-post', { shortcode: 'VID1lion' });
    });
    expect(opened).toMatchObject({
      success: true,
      from_state: 'feed',
      state: 'post_open',
      media_type: 'video',
      total_media: 1,
    });
    expect(events.map((e) => [e.type, e.trusted, e.path])).toEqual([['click', true, '/']]);

    const meta = await get('get-post-metadata');
    expect(meta).toMatchObject({
      media_type: 'video',
      views: 1200000,
      views_text: '1.2M views',
      likes: null,
      location: null,
      tagged: [],
      caption: 'A lion at dawn',
    });

    const dl = await post('download-post-media');
    expect(dl.files).toHaveLength(1);
    const file = await download(dl.files[0].media_url as string);
    expect(file.bytes.equals(mediaFile('/media/VID1lion-0.mp4').bytes)).toBe(true);

    const closeEvents = await eventsDuring(async () => {
      expect(await post('close-post', { escape_probability: 0 })).toMatchObject({
        success: true,
        method: 'button',
        state: 'profile',
      });
    });
    expect(closeEvents.map((e) => [e.type, e.target, e.trusted])).toEqual([
      ['click', 'Close', true],
    ]);
  });
});

describe('videos the site streams from blob: addresses', () => {
  /** Waits until the open post's video plays from a blob: address, as the page sets it. */
  async function untilStreamed(): Promise<Body> {
    let meta: Body = {};
    for (let i = 0; i < 50; i += 1) {
      meta = await get('get-post-metadata');
      if (String(meta.media?.[0]?.url).startsWith('blob:')) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    expect(meta.media[0]).toMatchObject({ type: 'video', url: expect.stringMatching(/^blob:/) });
    return meta;
  }

  test('a reel: its file found through the site’s API answer in the capture', async () => {
    await navigate('/natgeo/');
    expect(await post('open-post', { shortcode: 'REEL1lens' })).toMatchObject({
      success: true,
      media_type: 'reel',
      page_url: `${site.url}/reel/REEL1lens/`,
    });
    const meta = await untilStreamed();
    expect(meta).toMatchObject({ media_type: 'reel', views: 98700, views_text: '98.7K plays' });
    const dl = await post('download-post-media');
    expect(dl).toMatchObject({
      success: true,
      count: 1,
      skipped: [],
      files: [
        {
          position: 1,
          type: 'video',
          source: 'site_api',
          source_url: `${site.url}/media/REEL1lens-0.mp4`,
          filename: 'natgeo_REEL1lens_1.mp4',
        },
      ],
    });
    const file = await download(dl.files[0].media_url as string);
    expect(file.bytes.equals(mediaFile('/media/REEL1lens-0.mp4').bytes)).toBe(true);
    expect(await post('close-post', { escape_probability: 1 })).toMatchObject({ state: 'profile' });
  });

  test('a streamed video the API does not describe: success false with the reason', async () => {
    await navigate('/p/FAN3clip/');
    await untilStreamed();
    const r = await post('download-post-media');
    expect(r).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'p',
      error:
        'Expected a media file to download in the open post, found media 1: the site streams this video (blob: address), no file to download',
    });
  });
});

test('the family’s blacklist keeps the site’s telemetry out of the capture', async () => {
  site.setTelemetry(true);
  try {
    const before = site.seen.length;
    await navigate('/');
    const sent = (): string[] => site.seen.slice(before).map((s) => s.path);
    // The page starts the four requests at once; they reach the site in any order.
    const expected = ['/api/v1/feed/reels_tray/', ...TELEMETRY_PATHS];
    for (let i = 0; i < 50 && !expected.every((p) => sent().includes(p)); i += 1) {
      await new Promise((res) => setTimeout(res, 100));
    }
    // The page did send its telemetry; the site received it.
    expect(sent()).toEqual(expect.arrayContaining([...TELEMETRY_PATHS]));
    // Bodies are read once the page's network is quiet: the tray's line is the sign.
    let urls: string[] = [];
    for (let i = 0; i < 30 && !urls.some((u) => u.includes('reels_tray')); i += 1) {
      await new Promise((res) => setTimeout(res, 200));
      const net = await w.call<Body>('GET', '/api/v1/ops/p/network');
      urls = (net.body.http as Body[]).map((l) => l.url as string);
    }
    expect(urls).toContain(`${site.url}/api/v1/feed/reels_tray/`);
    expect(urls.filter((u) => TELEMETRY_PATHS.some((p) => u.includes(p)))).toEqual([]);
  } finally {
    site.setTelemetry(false);
  }
});

describe('wrong states and missing posts', () => {
  test('each plugin names the state it found and the way out', async () => {
    await navigate('/natgeo/');
    expect(await post('open-post', { shortcode: 'NOTHERE1' })).toEqual({
      success: false,
      debug_id: expect.any(String),
      page_id: 'p',
      error: 'shortcode_not_in_view',
    });
    for (const [method, name] of [
      ['GET', 'get-post-metadata'],
      ['POST', 'download-post-media'],
      ['POST', 'close-post'],
    ] as const) {
      const r = await plugin(method, name);
      expect([name, r.status, r.body]).toEqual([
        name,
        200,
        {
          success: false,
          debug_id: expect.any(String),
          page_id: 'p',
          error: expect.stringMatching(/^Expected state post_open, found state profile at /),
          state: 'profile',
          hint: expect.stringContaining('social/open-post'),
        },
      ]);
    }
    await navigate('/p/CAR3reef/');
    expect(await post('open-post', { shortcode: 'VID1lion' })).toMatchObject({
      success: false,
      state: 'post_open',
      hint: 'close the open post first with social/close-post',
    });
    await navigate('/stories/natgeo/');
    expect(await post('open-post', { shortcode: 'VID1lion' })).toMatchObject({
      success: false,
      state: 'story_open',
    });
  });

  test('the login wall: the feed cannot be listed', async () => {
    site.setLoggedIn(false);
    try {
      await navigate('/');
      const r = await get('get-posts-feed');
      expect(r).toMatchObject({ success: false, state: 'unknown' });
      expect(r.error).toContain('the persona is not logged in');
    } finally {
      site.setLoggedIn(true);
    }
  });
});
