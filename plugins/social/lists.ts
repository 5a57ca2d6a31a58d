import type { PluginContext, PluginResult } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { SocialPage, SocialState } from './page-state';
import { describePage, readPage, readUntil, requireState, stateOf } from './page-state';
import { followStatusOf, parseCount, readAbout } from './people';
import { PEOPLE, SELECTORS } from './site';

/**
 * The following and followers lists: opening one from the profile header, reading its rows,
 * scrolling inside it so the site loads more. social/open-following, open-followers,
 * get-following and get-followers are these functions with their `kind`.
 */

export type ListKind = 'following' | 'followers';

/** One row as the open list shows it. */
export interface ListRow {
  handle: string;
  name: string | null;
  /** The row's button label; null when it has none (the persona's own row). */
  button: string | null;
}

/** What the isolated world sees of the open list. */
interface ListView {
  rows: ListRow[];
  loading: boolean;
  /** The scrolling box of the rows, in viewport pixels; null when nothing scrolls. */
  scroller: { x: number; y: number; width: number; height: number; toBottom: number } | null;
}

type Marks = typeof SELECTORS & typeof PEOPLE;

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function listInPage(m: Marks): ListView | null {
  const dialog = document.querySelector(m.dialog);
  if (!dialog) return null;
  const text = (e: Element | null): string => (e?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const handleOf = (href: string | null): string | null => {
    const h = /^\/([A-Za-z0-9._]+)\/?$/.exec(href ?? '');
    return h?.[1]?.toLowerCase() ?? null;
  };
  const rows: ListRow[] = [];
  const seen = new Set<string>();
  for (const a of Array.from(dialog.querySelectorAll('a[href^="/"]'))) {
    const href = a.getAttribute('href');
    const handle = handleOf(href);
    if (!handle || seen.has(handle)) continue;
    seen.add(handle);
    // The row: the widest box around the link whose links all lead to this one account.
    let row: Element = a;
    while (row.parentElement && row.parentElement !== dialog) {
      const links = Array.from(row.parentElement.querySelectorAll('a[href^="/"]'));
      if (links.some((l) => handleOf(l.getAttribute('href')) !== handle)) break;
      row = row.parentElement;
    }
    const name = Array.from(row.querySelectorAll('span'))
      .filter((s) => !s.closest('a, button'))
      .map(text)
      .find((t) => t !== '' && t.toLowerCase() !== handle);
    const button = row.querySelector('button');
    rows.push({ handle, name: name ?? null, button: button ? text(button) : null });
  }
  let scroller: ListView['scroller'] = null;
  for (const e of Array.from(dialog.querySelectorAll('*'))) {
    const overflow = getComputedStyle(e).overflowY;
    if ((overflow !== 'auto' && overflow !== 'scroll') || e.scrollHeight <= e.clientHeight)
      continue;
    const r = e.getBoundingClientRect();
    const toBottom = e.scrollHeight - e.scrollTop - e.clientHeight;
    scroller = { x: r.left, y: r.top, width: r.width, height: r.height, toBottom };
    break;
  }
  return { rows, loading: dialog.querySelector(m.listLoading) !== null, scroller };
}

async function readList(ctx: PluginContext): Promise<ListView> {
  const view = await ctx.page.evaluate(listInPage, { ...SELECTORS, ...PEOPLE });
  return view ?? { rows: [], loading: false, scroller: null };
}

const stateFor = (kind: ListKind): SocialState =>
  kind === 'following' ? 'following_open' : 'followers_open';

/** The dialog animates in, then the site fetches its first rows. */
const OPEN_WAIT_MS = 10_000;
/** After a wheel scroll near the bottom the site shows its spinner within a moment. */
const SPINNER_GRACE_MS = 400;
const LOAD_WAIT_MS = 8_000;

/** Waits until the open list is not loading; answers the rows then. */
async function settled(ctx: PluginContext): Promise<ListView> {
  const until = Date.now() + Math.min(LOAD_WAIT_MS, ctx.remainingMs());
  for (;;) {
    const view = await readList(ctx);
    if (!view.loading || Date.now() >= until) return view;
    await ctx.sleep(200);
  }
}

/** The header's count of the list, as a number (null when the header shows none). */
async function expectedCount(ctx: PluginContext, kind: ListKind): Promise<number | null> {
  const about = await readAbout(ctx);
  return parseCount(kind === 'following' ? (about?.following ?? null) : (about?.followers ?? null));
}

/** social/open-following and social/open-followers. */
export async function openList(ctx: PluginContext, kind: ListKind): Promise<PluginResult> {
  const page = await readPage(ctx);
  requireState(page, 'profile');
  const handle = page.profile?.handle ?? '';
  const link = kind === 'following' ? PEOPLE.followingLink : PEOPLE.followersLink;
  if (!(await ctx.page.exists(link))) {
    throw new SiteError(
      `the ${kind} link in @${handle}'s header`,
      `none at ${page.url} (a private account hides its lists)`,
    );
  }
  await clickOnScreen(ctx, link, `the ${kind} link in @${handle}'s header`);
  const opened = await readUntil(ctx, (p) => stateOf(p) === stateFor(kind), OPEN_WAIT_MS);
  if (stateOf(opened) !== stateFor(kind)) {
    throw new SiteError(`the ${kind} list open after a click on its link`, describePage(opened));
  }
  await ctx.sleep(SPINNER_GRACE_MS);
  const view = await settled(ctx);
  const expected = await expectedCount(ctx, kind);
  return {
    kind,
    handle,
    rows_in_view: view.rows.length,
    expected,
    page_url: ctx.page.url(),
    message:
      `The ${kind} list of @${handle} is open with ${view.rows.length} row(s) rendered` +
      (expected === null ? '' : ` of ${expected}`),
  };
}

/**
 * Wheel-scrolls inside the list towards its end `times` times, letting each load finish; stops
 * early, as a person would, once a scroll at the end brought no new row (the list is whole).
 */
async function scrollList(ctx: PluginContext, times: number): Promise<number> {
  let done = 0;
  let before = -1;
  for (; done < times; done += 1) {
    const view = await settled(ctx);
    const box = view.scroller;
    if (!box || (view.rows.length === before && box.toBottom <= 1)) break;
    before = view.rows.length;
    // The pointer over the list, away from its edges: the wheel scrolls what is under it.
    await ctx.gestures.hoverAt({
      x: box.x + box.width * (0.3 + 0.4 * ctx.random()),
      y: box.y + box.height * (0.3 + 0.4 * ctx.random()),
    });
    // A person scrolls towards the end of what is loaded, a screenful at least.
    await ctx.gestures.scroll(Math.max(box.height * 0.8, Math.min(box.toBottom, box.height * 3)));
    await ctx.sleep(SPINNER_GRACE_MS);
  }
  return done;
}

/** social/get-following and social/get-followers. */
export async function getList(
  ctx: PluginContext,
  kind: ListKind,
  scrolls: number,
): Promise<PluginResult> {
  const page: SocialPage = await readPage(ctx);
  requireState(page, stateFor(kind));
  const handle = page.profile?.handle ?? null;
  const scrolled = await scrollList(ctx, scrolls);
  const view = await settled(ctx);
  const own = page.ownHandle;
  const rows = view.rows.map((r, i) => {
    return {
      index: i + 1,
      handle: r.handle,
      name: r.name,
      follow_status: followStatusOf(r.button),
      is_own: r.handle === own,
      href: new URL(`/${r.handle}/`, page.url).href,
    };
  });
  const expected = await expectedCount(ctx, kind);
  const complete = expected !== null && rows.length >= expected;
  let message = `${rows.length} row(s) of @${handle}'s ${kind} list rendered`;
  if (expected !== null) message += ` of ${expected}`;
  if (scrolls > 0) message += ` after ${scrolled} scroll(s)`;
  if (!complete) message += '; call again with scrolls for more';
  return {
    kind,
    handle,
    count: rows.length,
    expected,
    complete,
    scrolls: scrolled,
    rows,
    page_url: ctx.page.url(),
    message,
  };
}

/** `scrolls` is a whole number: the manifest bounds it, this says it is whole. */
export function validateScrolls(p: { scrolls: number }): string | null {
  return Number.isInteger(p.scrolls) ? null : 'scrolls must be a whole number from 0 to 20';
}
