import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import { SELECTORS, TEXTS } from './site';

/** What the page on screen is, as far as the archive's marks tell. */
export interface ArchivePage {
  url: string;
  title: string;
  /** The anti-bot check: nothing else on the page can be trusted. */
  interstitial: boolean;
  snapshot: boolean;
  /** A save in progress (the archive's `/wip/` page). */
  wip: boolean;
  /** The snapshot links of a result list, newest first (as the archive lists them). */
  links: string[];
  /** "No results" in the page's content, outside the result rows. */
  noResults: boolean;
  /** The value of the "archive this url" field a "No results" page offers; null: no form. */
  archiveFormUrl: string | null;
  /** The address a snapshot was saved from, from its header. */
  savedFrom: string | null;
  searchForm: boolean;
  saveForm: boolean;
}

type Marks = typeof SELECTORS & typeof TEXTS;

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function inspectInPage(m: Marks): ArchivePage {
  const one = (sel: string): Element | null => document.querySelector(sel);
  const content = one(m.content);
  // An archived page may itself hold captcha markup or the words "No results": only what
  // the archive shows around its content counts.
  const outsideContent = (e: Element): boolean => !content || !content.contains(e);
  const snapshot = one(m.snapshotMark) !== null && content !== null;
  const headings = Array.from(document.querySelectorAll('h1, h2'))
    .filter(outsideContent)
    .map((e) => e.textContent ?? '')
    .join(' ');
  const captchaShown = Array.from(document.querySelectorAll(m.captcha)).some(outsideContent);
  const checkText = new RegExp(m.interstitial, 'i').test(`${document.title} ${headings}`);
  let contentText = '';
  if (content) {
    const copy = content.cloneNode(true);
    if (copy instanceof Element) copy.querySelectorAll(m.resultRow).forEach((row) => row.remove());
    contentText = copy.textContent ?? '';
  }
  const field = (sel: string): string | null => {
    const e = one(sel);
    return e && 'value' in e ? String(e.value) : null;
  };
  return {
    url: location.href,
    title: document.title,
    interstitial: captchaShown || (!snapshot && checkText),
    snapshot,
    wip: location.pathname.includes(m.wipPath),
    links: Array.from(document.querySelectorAll(m.resultLink)).flatMap((a) =>
      a instanceof HTMLAnchorElement ? [a.href] : [],
    ),
    noResults: !snapshot && new RegExp(m.noResults, 'i').test(contentText),
    archiveFormUrl: field(m.archiveInput),
    savedFrom: snapshot ? field(m.savedFrom) : null,
    searchForm: one(m.searchInput) !== null,
    saveForm: one(m.saveInput) !== null,
  };
}

/**
 * Reads the page. A read that meets a document being replaced (a progress page reloading) is
 * tried again.
 */
export async function readPage(ctx: PluginContext): Promise<ArchivePage> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await ctx.page.evaluate(inspectInPage, { ...SELECTORS, ...TEXTS });
    } catch (err) {
      if (attempt >= 3 || ctx.signal.aborted) throw err;
      await ctx.sleep(300);
      await ctx.page.waitForAny({ body: 'body' }, 5_000);
    }
  }
}

/** The marks any archive page but a save in progress shows once it has rendered. */
const RENDERED = {
  captcha: SELECTORS.captcha,
  snapshot: SELECTORS.snapshotMark,
  content: SELECTORS.content,
  search: SELECTORS.searchInput,
  save: SELECTORS.saveInput,
};

/** Waits (up to `timeoutMs`) until the page shows one of the archive's marks, then reads it. */
export async function settledPage(ctx: PluginContext, timeoutMs = 10_000): Promise<ArchivePage> {
  await ctx.page.waitForAny(RENDERED, timeoutMs);
  return readPage(ctx);
}

/** The page in a few words, for "found …" in a SiteError. */
export function describePage(p: ArchivePage): string {
  if (p.interstitial) return interstitialFound(p);
  if (p.snapshot) return `a snapshot page ("${p.title}") at ${p.url}`;
  if (p.wip) return `a save in progress at ${p.url}`;
  if (p.links.length > 0) return `a result list of ${p.links.length} snapshot(s) at ${p.url}`;
  if (p.noResults) return `the "No results" page at ${p.url}`;
  return `a page titled "${p.title}" at ${p.url}`;
}

const interstitialFound = (p: ArchivePage): string =>
  `the archive's anti-bot security check ("One more step", a captcha titled "${p.title}") at ` +
  `${p.url}; a person has to solve it in the browser before the archive answers again`;

/** The anti-bot check answers nothing about the archive: say so rather than guess. */
export function refuseInterstitial(p: ArchivePage, expected: string): void {
  if (p.interstitial) throw new SiteError(expected, interstitialFound(p));
}
