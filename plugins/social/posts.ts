import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import type { SocialPage } from './page-state';
import { describePage, readPage, requireState } from './page-state';
import type { ApiMedia } from './post-data';
import { findPostMedia, parseApiBody } from './post-data';
import { PATTERNS, POSTS, SELECTORS } from './site';

/**
 * What the post plugins read: the feed's posts in view, and the open post's details. Both are
 * one isolated-world call each; the site's scripts never see them.
 */

export type PostMediaType = 'photo' | 'carousel' | 'video' | 'reel';

/** A post of the feed, in page order. */
export interface FeedPost {
  index: number;
  author: string | null;
  shortcode: string;
  href: string;
  /** An exact selector of the post's link (its timestamp), unique in the document. */
  selector: string;
  media_type: PostMediaType;
  caption: string | null;
  date: string | null;
}

/** One media of the open post, in carousel order. */
export interface PostMedia {
  position: number;
  type: 'img' | 'video';
  /** Absolute address of the file, or null while the site has not rendered it. */
  url: string | null;
}

/** The open post's details, as the dialog shows them. */
export interface PostDetails {
  author: string | null;
  shortcode: string | null;
  /** The post's own address (`/p/<code>/` or `/reel/<code>/`), absolute. */
  href: string | null;
  is_reel: boolean;
  date: string | null;
  caption: string | null;
  likes_text: string | null;
  views_text: string | null;
  location: { name: string; href: string } | null;
  tagged: string[];
  media: PostMedia[];
}

type Marks = typeof SELECTORS & typeof PATTERNS & typeof POSTS;
const marks = (): Marks => ({ ...SELECTORS, ...PATTERNS, ...POSTS });

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function feedInPage(m: Marks): FeedPost[] {
  const postRe = new RegExp(m.postPath);
  const handleOf = (href: string | null): string | null => {
    const h = /^\/([A-Za-z0-9._]+)\/?$/.exec(href ?? '');
    return h?.[1]?.toLowerCase() ?? null;
  };
  const out: FeedPost[] = [];
  const articles = Array.from(document.querySelectorAll(m.feedArticle));
  for (const article of articles) {
    if (article.closest(m.dialog)) continue;
    const link = Array.from(article.querySelectorAll(m.articleLink)).find((a) =>
      postRe.test(a.getAttribute('href') ?? ''),
    );
    if (!link) continue;
    const raw = link.getAttribute('href') ?? '';
    const code = postRe.exec(raw)?.[1];
    if (code === undefined) continue;
    let selector = `a[href="${raw}"]`;
    if (document.querySelectorAll(selector).length > 1) selector = `main article ${selector}`;
    const media = article.querySelector(m.articleMedia);
    let media_type: PostMediaType = 'photo';
    if (/\/reels?\//.test(raw) || article.querySelector(m.clipIcon)) media_type = 'reel';
    else if (article.querySelector(m.carouselIcon) || article.querySelector(m.articleNext))
      media_type = 'carousel';
    else if (media?.tagName === 'VIDEO') media_type = 'video';
    const alt = (article.querySelector('img')?.getAttribute('alt') ?? '').trim();
    out.push({
      index: out.length + 1,
      author: handleOf(article.querySelector(m.articleAuthor)?.getAttribute('href') ?? null),
      shortcode: code,
      href: new URL(raw, location.href).href,
      selector,
      media_type,
      caption: alt === '' ? null : alt,
      date: article.querySelector(m.time)?.getAttribute('datetime') ?? null,
    });
  }
  return out;
}

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function postInPage(m: Marks): PostDetails | null {
  const article = document.querySelector(m.dialogArticle);
  if (!article) return null;
  // innerText is what a person sees; an element that is not HTML (an SVG) has textContent only.
  const text = (e: Element | null | undefined): string =>
    ((e instanceof HTMLElement ? e.innerText : e?.textContent) ?? '').trim();
  const handleOf = (href: string | null): string | null => {
    const h = /^\/([A-Za-z0-9._]+)\/?$/.exec(href ?? '');
    return h?.[1]?.toLowerCase() ?? null;
  };
  const postRe = new RegExp(m.postPath);
  const own =
    postRe.exec(location.pathname)?.[0] ??
    Array.from(article.querySelectorAll(m.articleLink))
      .map((a) => postRe.exec(a.getAttribute('href') ?? '')?.[0])
      .find((p) => p !== undefined) ??
    null;
  const code = own ? (postRe.exec(own)?.[1] ?? null) : null;

  let likes: string | null = null;
  let views: string | null = null;
  for (const section of Array.from(article.querySelectorAll(m.counts))) {
    const t = text(section);
    likes ??= new RegExp(m.likes, 'i').exec(t)?.[0] ?? null;
    views ??= new RegExp(m.views, 'i').exec(t)?.[0] ?? null;
  }
  const place = article.querySelector(m.location);
  const items = Array.from(document.querySelectorAll(m.mediaItem));
  const slides = items.length > 0 ? items : [article];
  const media: PostMedia[] = slides.map((li, i) => {
    const video = li.querySelector('video');
    const src = video
      ? (video.getAttribute('src') ?? video.querySelector('source')?.getAttribute('src'))
      : li.querySelector('img')?.getAttribute('src');
    return {
      position: i + 1,
      type: video ? 'video' : 'img',
      url: src ? new URL(src, document.baseURI).href : null,
    };
  });
  const tagged = Array.from(article.querySelectorAll(m.tagged))
    .map((a) => handleOf(a.getAttribute('href')))
    .filter((h): h is string => h !== null);
  const caption = text(article.querySelector(m.caption));
  return {
    author: handleOf(document.querySelector(m.dialogAuthor)?.getAttribute('href') ?? null),
    shortcode: code,
    href: own ? new URL(own, location.href).href : null,
    is_reel: own !== null && /\/reels?\//.test(own),
    date: article.querySelector(m.time)?.getAttribute('datetime') ?? null,
    caption: caption === '' ? null : caption,
    likes_text: likes,
    views_text: views,
    location: place
      ? { name: text(place), href: new URL(place.getAttribute('href') ?? '', location.href).href }
      : null,
    tagged: Array.from(new Set(tagged)),
    media,
  };
}

/** The feed's posts rendered now, in page order. */
export function readFeed(ctx: PluginContext): Promise<FeedPost[]> {
  return ctx.page.evaluate(feedInPage, marks());
}

/** The open post's details, or null when no post is open. */
export function readPost(ctx: PluginContext): Promise<PostDetails | null> {
  return ctx.page.evaluate(postInPage, marks());
}

/** The page and the open post's details; refuses a call made in another state. */
export async function readOpenPost(
  ctx: PluginContext,
): Promise<{ page: SocialPage; post: PostDetails }> {
  const page = await readPage(ctx);
  requireState(page, 'post_open');
  const post = await readPost(ctx);
  if (!post) throw new SiteError('an open post', describePage(await readPage(ctx)));
  return { page, post };
}

/** What kind of post the open one is, from its media and address. */
export function postMediaType(d: PostDetails): PostMediaType {
  if (d.is_reel) return 'reel';
  if (d.media.length > 1) return 'carousel';
  return d.media[0]?.type === 'video' ? 'video' : 'photo';
}

/**
 * The media of post `shortcode` as the site's API answered them to the page, read from the
 * page's network capture (newest answer first) once it has read every finished response;
 * null when no captured answer describes it.
 */
export async function mediaFromCapture(
  ctx: PluginContext,
  shortcode: string,
): Promise<ApiMedia[] | null> {
  await ctx.network.settled();
  const lines = [
    ...(await ctx.network.http({ resource_type: 'xhr', include_body: true })),
    ...(await ctx.network.http({ resource_type: 'fetch', include_body: true })),
  ].sort((a, b) => b.seq - a.seq);
  for (const line of lines) {
    if (!line.body || !line.body.includes(shortcode)) continue;
    const media = findPostMedia(parseApiBody(line.body), shortcode);
    if (media) return media;
  }
  return null;
}
