import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, pollUntil } from '@persona-browser/plugin-sdk';
import { PATTERNS, REACHED_BY, SELECTORS, bareHandle } from './site';

export type SocialState =
  'feed' | 'profile' | 'post_open' | 'story_open' | 'following_open' | 'followers_open' | 'unknown';

/** The open post's media strip: which slide is on screen. */
export interface MediaStrip {
  /** 1-based position of the slide on screen. */
  position: number;
  total: number;
  current: 'img' | 'video';
  has_previous: boolean;
  has_next: boolean;
}

/** One tile of a profile's grid, in page order. */
export interface GridTile {
  /** The href attribute as written (`/p/ABC123/`). */
  href: string;
  shortcode: string;
  /** An exact selector for that tile, unique in the document. */
  selector: string;
  media_type: 'photo' | 'carousel' | 'video' | 'reel';
  pinned: boolean;
  caption: string | null;
}

/** Everything the plugins decide on, read from the live page in one isolated-world call. */
export interface SocialPage {
  url: string;
  path: string;
  title: string;
  loginWall: boolean;
  /** The left navigation's search entry is on the page. */
  hasNav: boolean;
  ownHandle: string | null;
  /** Lower-cased navigation label → count, for links that show a badge. */
  badges: Record<string, number>;
  story: { handle: string | null } | null;
  /** A profile header: its handle, follow button, story ring, counts. */
  profile: {
    handle: string;
    followButton: string | null;
    hasStory: boolean;
    followers: string | null;
    following: string | null;
  } | null;
  grid: GridTile[];
  feedArticles: number;
  /** An open post. */
  post: {
    author: string | null;
    shortcode: string | null;
    liked: boolean;
    media: MediaStrip;
  } | null;
  /** An open following or followers list. */
  list: { kind: 'following' | 'followers'; rows: number } | null;
  /** The search panel: null when closed. */
  search: { loading: boolean; results: string[]; noResults: boolean } | null;
}

type Marks = typeof SELECTORS & typeof PATTERNS;

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function inspectInPage(m: Marks): SocialPage {
  const one = (sel: string, root: ParentNode = document): Element | null => root.querySelector(sel);
  const all = (sel: string, root: ParentNode = document): Element[] =>
    Array.from(root.querySelectorAll(sel));
  const text = (e: Element | null): string => (e?.textContent ?? '').trim();
  const handleOf = (href: string | null): string | null => {
    const h = /^\/([A-Za-z0-9._]+)\/?$/.exec(href ?? '');
    return h?.[1]?.toLowerCase() ?? null;
  };
  const path = location.pathname;

  const badges: Record<string, number> = {};
  for (const a of all(m.navLinks)) {
    const label = a.getAttribute('aria-label') ?? '';
    const n = new RegExp(m.badge, 'i').exec(label);
    if (!n) continue;
    // The visible label ("Messages 3"): an icon's <title> is not rendered, so not in innerText.
    const shown = a instanceof HTMLElement ? a.innerText : text(a);
    const name = (shown || label).replace(/\d+/g, '').trim().toLowerCase();
    badges[name] = Number(n[1]);
  }

  const storyMatch = new RegExp(m.storyPath).exec(path);
  const storyOpen = storyMatch !== null || one(m.storyViewer) !== null;
  const storyHandle = handleOf(one(m.storyAuthor)?.getAttribute('href') ?? null);

  const header = one(m.profileHeader);
  const count = (what: string): string | null => {
    const link = header ? one(`a[href$="/${what}/"]`, header) : null;
    return link ? text(link) : null;
  };
  const profile = header
    ? {
        handle: text(one(m.profileHandle)).replace(/^@/, '').toLowerCase(),
        followButton: text(one(m.followButton)) || null,
        hasStory: one(m.storyRing) !== null,
        followers: count('followers'),
        following: count('following'),
      }
    : null;

  const grid: GridTile[] = [];
  const postRe = new RegExp(m.postPath);
  for (const a of all(m.gridTile)) {
    if (a.closest(m.dialog)) continue;
    const href = a.getAttribute('href') ?? '';
    const shortcode = postRe.exec(href)?.[1];
    if (shortcode === undefined) continue;
    let selector = `a[href="${href}"]`;
    if (all(selector).length > 1) selector = `main ${selector}`;
    let media_type: GridTile['media_type'] = 'photo';
    if (/\/reels?\//.test(href) || one(m.clipIcon, a)) media_type = 'reel';
    else if (one(m.carouselIcon, a)) media_type = 'carousel';
    else if (one(m.videoIcon, a)) media_type = 'video';
    const alt = (one('img', a)?.getAttribute('alt') ?? '').trim();
    grid.push({
      href,
      shortcode,
      selector,
      media_type,
      pinned: one(m.pinnedIcon, a) !== null,
      caption: alt === '' ? null : alt,
    });
  }

  let post: SocialPage['post'] = null;
  const article = one(m.dialogArticle);
  if (article) {
    const items = all(m.mediaItem);
    const strip = one(m.mediaStrip);
    // The slide on screen is the one whose middle lies inside the strip's frame.
    const frame = (strip?.parentElement ?? strip)?.getBoundingClientRect();
    let position = 1;
    items.forEach((li, i) => {
      const r = li.getBoundingClientRect();
      const mid = r.left + r.width / 2;
      if (frame && mid > frame.left && mid < frame.right) position = i + 1;
    });
    const current = items[position - 1] ?? article;
    const fromUrl = postRe.exec(path);
    const timeLink = one('a[href*="/p/"], a[href*="/reel/"]', article)?.getAttribute('href');
    const fromLink = timeLink ? postRe.exec(timeLink) : null;
    post = {
      author: handleOf(one(m.dialogAuthor)?.getAttribute('href') ?? null),
      shortcode: fromUrl?.[1] ?? fromLink?.[1] ?? null,
      liked: one(m.likedIcon) !== null,
      media: {
        position,
        total: Math.max(1, items.length),
        current: one('video', current) ? 'video' : 'img',
        has_previous: one(m.previousButton) !== null,
        has_next: one(m.nextButton) !== null,
      },
    };
  }

  let list: SocialPage['list'] = null;
  const dialog = one(m.dialog);
  if (dialog && !article) {
    const heading = text(one(m.dialogHeading)).toLowerCase();
    const fromPath = new RegExp(m.listPath).exec(path)?.[2];
    const kind = heading === 'following' || heading === 'followers' ? heading : fromPath;
    if (kind === 'following' || kind === 'followers') {
      const rows = new Set(all(m.dialogListRow).map((a) => a.getAttribute('href')));
      list = { kind, rows: rows.size };
    }
  }

  const panel = one(m.searchPanel);
  const search = panel
    ? {
        loading: one(m.searchLoading) !== null,
        results: all(m.searchResult).map((a) => a.getAttribute('href') ?? ''),
        noResults: new RegExp(m.noResults, 'i').test(text(panel)),
      }
    : null;

  return {
    url: location.href,
    path,
    title: document.title,
    loginWall: new RegExp(m.loginPath).test(path) || one(m.loginForm) !== null,
    hasNav: one(m.searchEntry) !== null,
    ownHandle: handleOf(one(m.ownProfileLink)?.getAttribute('href') ?? null),
    badges,
    story: storyOpen ? { handle: storyHandle ?? storyMatch?.[1] ?? null } : null,
    profile,
    grid,
    feedArticles: all(m.feedArticle).filter((a) => !a.closest(m.dialog)).length,
    post,
    list,
    search,
  };
}

/**
 * Reads the page. A read that meets a document being replaced (a link that loads a new page)
 * is tried again once the new document has a body.
 */
export async function readPage(ctx: PluginContext): Promise<SocialPage> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ctx.page.evaluate(inspectInPage, { ...SELECTORS, ...PATTERNS });
    } catch (err) {
      if (attempt >= 3 || ctx.signal.aborted) throw err;
      await ctx.sleep(300);
      await ctx.page.waitForAny({ body: 'body' }, 5_000);
    }
  }
}

/** The state the social plugins chain on, from what the page shows. */
export function stateOf(p: SocialPage): SocialState {
  if (p.loginWall) return 'unknown';
  if (p.story) return 'story_open';
  if (p.post) return 'post_open';
  if (p.list) return p.list.kind === 'following' ? 'following_open' : 'followers_open';
  if (p.profile && p.profile.handle) return 'profile';
  if (p.path === '/' && p.hasNav) return 'feed';
  return 'unknown';
}

/** The page in a few words, for "found …" in a SiteError. */
export function describePage(p: SocialPage): string {
  if (p.loginWall) {
    return `the login wall at ${p.url}: the persona is not logged in; log in through the live view`;
  }
  const state = stateOf(p);
  if (state === 'unknown') return `a page titled "${p.title}" at ${p.url}`;
  return `state ${state} at ${p.url}`;
}

/**
 * Refuses a call made in the wrong state: `success: false` naming the state found and the
 * plugin that reaches the one needed.
 */
export function requireState(p: SocialPage, needed: SocialState): void {
  const found = stateOf(p);
  if (found === needed) return;
  const hint = REACHED_BY[needed] ?? `reach state ${needed} first`;
  throw new SiteError(`state ${needed}`, `${describePage(p)}; ${hint}`, { state: found, hint });
}

/**
 * Refuses a call unless a profile is open, and, when `expected` names a handle, that profile
 * is its one (a guard against acting on the wrong account). Answers the open profile's handle.
 */
export function requireProfile(p: SocialPage, expected?: string): string {
  requireState(p, 'profile');
  const handle = p.profile?.handle ?? '';
  if (expected && bareHandle(expected) !== handle) {
    throw new SiteError(
      `the profile of @${bareHandle(expected)}`,
      `the profile of @${handle} at ${p.url}; ${REACHED_BY.profile}`,
    );
  }
  return handle;
}

/** Reads the page until `done` holds, up to `timeoutMs`; answers the last read either way. */
export const readUntil = (
  ctx: PluginContext,
  done: (p: SocialPage) => boolean,
  timeoutMs: number,
  pollMs = 200,
): Promise<SocialPage> => pollUntil(ctx, () => readPage(ctx), done, timeoutMs, pollMs);
