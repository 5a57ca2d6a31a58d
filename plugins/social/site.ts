import type { PluginContext } from '@persona-browser/plugin-sdk';

/**
 * The social site (Instagram) as the social plugins know it: where it is, and every selector
 * and address pattern they rely on. A change of the site's markup is one edit here.
 */

/** Selectors of the site's pages, all read in the isolated world or aimed at by gestures. */
export const SELECTORS = {
  /** The left navigation and its entries. */
  leftNav: 'nav, [role="navigation"]',
  homeLink: 'nav a[href="/"]',
  searchEntry: 'nav a:has(svg[aria-label="Search"])',
  /** The navigation's link to the persona's own profile: its picture's alt names the handle. */
  ownProfileLink: 'nav a[href^="/"]:has(img[alt$="profile picture"])',
  /** Navigation links that may carry a count badge (messages, notifications). */
  navLinks: 'nav a',
  /** The search panel the search entry opens beside the navigation. */
  searchPanel: 'section[aria-label="Search"]',
  searchInput: 'section[aria-label="Search"] input[aria-label="Search input"]',
  searchResult: 'section[aria-label="Search"] a[href^="/"]',
  searchLoading: 'section[aria-label="Search"] [aria-label="Loading..."]',
  /** A profile: its header with the handle, the follow button and the counts. */
  main: 'main, [role="main"]',
  profileHeader: 'main header:not(article header)',
  profileHandle: 'main header:not(article header) h2',
  followButton: 'main header:not(article header) button',
  /** Grid tiles of a profile: posts and reels. */
  gridTile: 'main a[href*="/p/"], main a[href*="/reel/"]',
  pinnedIcon: 'svg[aria-label^="Pinned post"], [title^="Pinned post"]',
  carouselIcon: 'svg[aria-label="Carousel"]',
  videoIcon: 'svg[aria-label="Video"]',
  clipIcon: 'svg[aria-label="Clip"]',
  storyRing: 'main header:not(article header) :is(canvas, [aria-label*="story" i])',
  /** The feed's posts. */
  feedArticle: 'main article',
  /** A dialog over the page: an open post, or a following/followers list. */
  dialog: '[role="dialog"]',
  dialogArticle: '[role="dialog"] article',
  dialogClose: '[role="dialog"] [aria-label="Close"]',
  dialogAuthor: '[role="dialog"] article header a[href^="/"]',
  dialogHeading: '[role="dialog"] h1, [role="dialog"] h2',
  /** A row of an open list links its account (its picture and its name both do). */
  dialogListRow: '[role="dialog"] a[href^="/"]',
  /** The open post's media: the carousel's slides (one for a single media). */
  mediaStrip: '[role="dialog"] article ul',
  mediaItem: '[role="dialog"] article ul > li',
  nextButton: '[role="dialog"] button[aria-label="Next"]',
  previousButton: '[role="dialog"] button[aria-label="Go back"]',
  likedIcon: '[role="dialog"] svg[aria-label="Unlike"]',
  /** The story viewer. */
  storyViewer: 'section[aria-label="Stories"]',
  storyAuthor: 'section[aria-label="Stories"] header a[href^="/"]',
  /** The login wall: the login form of a visit without a session. */
  loginForm: 'form input[name="username"]',
} as const;

/** Address patterns (regular expression sources) and text marks. */
export const PATTERNS = {
  /** A post or reel address; group 1 is its shortcode. */
  postPath: '/(?:p|reel|reels)/([A-Za-z0-9_-]+)/?',
  storyPath: '^/stories/([A-Za-z0-9._]+)/',
  listPath: '^/([A-Za-z0-9._]+)/(following|followers)/?$',
  loginPath: '^/accounts/login/',
  noResults: 'no results found',
  /** A nav link's aria-label with its badge: "Direct messaging - 3 new notifications link". */
  badge: '(\\d+)\\s+new\\s+notification',
} as const;

/** A handle as the site spells them: letters, digits, dots, underscores; `@` is optional. */
export const HANDLE_PATTERN = '^@?[A-Za-z0-9._]+$';

/** The handle without its `@`, lower-cased as the site's addresses have it. */
export const bareHandle = (handle: string): string => handle.trim().replace(/^@/, '').toLowerCase();

/** A profile's path: `/<handle>/`. */
export const profilePath = (handle: string): string => `/${bareHandle(handle)}/`;

/** The handle of a profile path (`/natgeo/` → `natgeo`), or null for any other path. */
export function handleOfPath(path: string): string | null {
  const m = /^\/([A-Za-z0-9._]+)\/?$/.exec(path);
  return m?.[1]?.toLowerCase() ?? null;
}

/** The site's address without a trailing slash. */
export function baseUrl(ctx: PluginContext): string {
  const value = ctx.setting('SOCIAL_BASE_URL') ?? 'https://www.instagram.com';
  return value.replace(/\/+$/, '');
}

/** Whether `url` is on the site (same origin as the base URL). */
export function isOnSite(ctx: PluginContext, url: string): boolean {
  try {
    return new URL(url).origin === new URL(baseUrl(ctx)).origin;
  } catch {
    return false;
  }
}

/** The plugin that reaches each state, for the hint of a call made in the wrong state. */
export const REACHED_BY: Record<string, string> = {
  profile: 'open a profile first with social/open-account',
  post_open:
    'open a post first with social/open-post (its shortcode from social/get-posts-profile or social/get-posts-feed)',
  /* People and navigation plugins. */
  feed: 'go to the feed first with social/go-home',
  following_open: 'open the list first with social/open-following',
  followers_open: 'open the list first with social/open-followers',
  story_open: 'open a story first with social/open-story',
};

/* ── People and navigation plugins (open-own-profile, follow, get-profile-info, the following
 * and followers lists, open-story, close-story, go-home): their marks, beside SELECTORS. ── */

/** Selectors and text marks of a profile's about block, its lists and the story viewer. */
export const PEOPLE = {
  /** A profile header's name, bio, links (through the site's redirect shim) and badge. */
  profileName: 'main header:not(article header) section > span',
  profileBio: 'main header:not(article header) h1',
  profileLinks: 'main header:not(article header) a[href^="http"]',
  verifiedBadge: 'main header:not(article header) svg[aria-label="Verified"]',
  /** The header's count links: a click opens the list dialog. */
  followersLink: 'main header:not(article header) a[href$="/followers/"]',
  followingLink: 'main header:not(article header) a[href$="/following/"]',
  /** An open list is loading more rows. */
  listLoading: '[role="dialog"] [aria-label="Loading..."]',
  /** The story viewer's close control (a button over a profile, a link on its own page). */
  storyClose: 'section[aria-label="Stories"] [aria-label="Close"]',
  /** Text marks (case-insensitive). */
  privateNotice: 'this account is private',
  /** The redirect shim's query parameter that holds a link's real address. */
  shimParam: 'u',
} as const;

/* ── Post plugins (get-posts-feed, open-post, get-post-metadata, download-post-media,
 * close-post): their marks, beside SELECTORS. ── */

/** Selectors and text marks of a feed post and of an open post's details. */
export const POSTS = {
  /** Inside a feed `article`: its author, its link (the timestamp) and its time. */
  articleAuthor: 'header a[href^="/"]',
  articleLink: 'a[href*="/p/"], a[href*="/reel/"]',
  time: 'time[datetime]',
  articleMedia: 'img, video',
  /** A feed carousel's own Next button (the site marks a carousel with it or with an icon). */
  articleNext: 'button[aria-label="Next"]',
  /** Inside the open post's `article`. */
  caption: 'h1',
  location: 'a[href*="/explore/locations/"]',
  /** Accounts tagged on a media: links inside the media strip. */
  tagged: 'ul > li a[href^="/"]',
  /** The sections under the media: the likes or views line is one of them. */
  counts: 'section',
  /** Text marks (case-insensitive): "12,345 likes", "1.2M views" (or plays). */
  likes: '(\\d[\\d,.]*\\s*[KMB]?)\\s+likes?\\b',
  views: '(\\d[\\d,.]*\\s*[KMB]?)\\s+(?:views|plays)\\b',
} as const;
