import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { HAS_MEDIA, parseApiBody } from '../post-data';
import { POSTS, PEOPLE, SELECTORS, bareHandle, baseUrl, handleOfPath } from '../site';
import { SiteCheck, valueAt } from '../../site-marks';

interface Params {
  handle?: string;
  shortcode?: string;
  wait_s: number;
}

/** What the check looks for on each page: names of the family's tables (site.ts). */
export const FEED = {
  selectors: [
    'leftNav',
    'homeLink',
    'searchEntry',
    'ownProfileLink',
    'navLinks',
    'main',
    'feedArticle',
  ],
  /** Inside a feed `article`. */
  article: ['articleAuthor', 'articleLink', 'time', 'articleMedia'],
} as const;
export const PROFILE = {
  selectors: ['profileHeader', 'profileHandle', 'followButton', 'gridTile'],
  people: ['followersLink', 'followingLink'],
} as const;
export const POST = {
  selectors: ['dialog', 'dialogArticle', 'dialogClose', 'dialogAuthor', 'mediaStrip', 'mediaItem'],
} as const;
/** The keys of the site's API answer about a post that social/download-post-media reads. */
export const API = { items: 'items', 'items[0].code': 'items.0.code' } as const;

/** The newest captured API answer that talks about post `code`, parsed; undefined if none. */
async function apiAnswerAbout(ctx: PluginContext, code: string): Promise<unknown> {
  await ctx.network.settled();
  const lines = [
    ...(await ctx.network.http({ resource_type: 'xhr', include_body: true })),
    ...(await ctx.network.http({ resource_type: 'fetch', include_body: true })),
  ].sort((a, b) => b.seq - a.seq);
  const line = lines.find((l) => l.body?.includes(code));
  return line?.body ? parseApiBody(line.body) : undefined;
}

async function checkPost(ctx: PluginContext, check: SiteCheck, code: string, waitMs: number) {
  const where = `post ${code}`;
  await clickOnScreen(ctx, `main a[href*="/${code}/"]`, `the grid tile of post ${code}`);
  await check.selectors(ctx, where, 'SELECTORS', SELECTORS, [...POST.selectors], '', waitMs);
  // The page asks the API about the post as it opens: give its answer the same time.
  let data = await apiAnswerAbout(ctx, code);
  for (let waited = 0; data === undefined && waited < waitMs; waited += 500) {
    await ctx.sleep(500);
    data = await apiAnswerAbout(ctx, code);
  }
  const apiWhere =
    data === undefined ? `no API answer about ${code} captured` : `API answer about ${code}`;
  check.keys(apiWhere, 'API', data, API);
  const item = valueAt(data, 'items.0');
  const media = typeof item === 'object' && item !== null && HAS_MEDIA.some((k) => k in item);
  check.record(`API.items[0].(${HAS_MEDIA.join('|')})`, 'json_key', apiWhere, media);
  await ctx.gestures.pressEscape();
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const check = new SiteCheck();
    const waitMs = p.wait_s * 1000;
    const base = baseUrl(ctx);

    await ctx.page.goto(`${base}/`);
    const first = await ctx.page.waitForAny(
      { nav: SELECTORS.leftNav, login: SELECTORS.loginForm, main: SELECTORS.main },
      waitMs,
    );
    if (first === 'login') {
      throw new SiteError('a logged-in page of the site', `the login wall at ${ctx.page.url()}`);
    }
    await check.selectors(ctx, 'feed', 'SELECTORS', SELECTORS, [...FEED.selectors], '', waitMs);
    await check.selectors(ctx, 'feed', 'POSTS', POSTS, [...FEED.article], SELECTORS.feedArticle);

    const own = handleOfPath((await ctx.page.attr(SELECTORS.ownProfileLink, 'href')) ?? '');
    const handle = p.handle ? bareHandle(p.handle) : own;
    if (handle === null) {
      throw new SiteError(
        'a profile to check (the handle parameter, or the navigation’s own profile link)',
        'no handle given and SELECTORS.ownProfileLink missing',
        check.answer('social'),
      );
    }
    await ctx.page.goto(`${base}/${handle}/`);
    const where = `profile @${handle}`;
    await check.selectors(ctx, where, 'SELECTORS', SELECTORS, [...PROFILE.selectors], '', waitMs);
    await check.selectors(ctx, where, 'PEOPLE', PEOPLE, [...PROFILE.people]);

    const tile = await ctx.page.attr(SELECTORS.gridTile, 'href');
    const code = p.shortcode ?? /\/(?:p|reel|reels)\/([A-Za-z0-9_-]+)/.exec(tile ?? '')?.[1];
    if (code) await checkPost(ctx, check, code, waitMs);
    else check.record('a post to open (a grid tile)', 'selector', where, false);
    return check.answer('social');
  },
});
