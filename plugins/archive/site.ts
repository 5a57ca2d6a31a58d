import type { PluginContext } from '@persona-browser/plugin-sdk';

/**
 * archive.today as the archive plugins know it: where it is, and the marks by which its pages
 * are told apart. Every selector the family uses is here, so that a change of the site's markup
 * is one edit.
 */

/** The forms and marks of the archive's pages. */
export const SELECTORS = {
  /** Home page: "I want to search the archive for saved snapshots". */
  searchInput: 'form#search input[name="q"]',
  searchButton: 'form#search [type="submit"]',
  /** Home page: "My url is alive and I want to archive its content". */
  saveInput: 'form#submiturl input[name="url"]',
  saveButton: 'form#submiturl [type="submit"]',
  /** The body of a result list, a "No results" page and a snapshot. */
  content: '#CONTENT',
  /** One row of a result list; its first link opens that snapshot. Newest row first. */
  resultRow: '#CONTENT .TEXT-BLOCK',
  resultLink: '#CONTENT .TEXT-BLOCK > a:first-of-type',
  /** The "archive this url" form a "No results" page offers. */
  archiveInput: '#CONTENT form[action*="/submit"] input[name="url"]',
  archiveButton: '#CONTENT form[action*="/submit"] [type="submit"]',
  /** A snapshot's header: when it was archived, and the address it was saved from. */
  snapshotMark: '#HEADER time[itemprop="pubdate"]',
  savedFrom: '#HEADER input[name="q"]',
  /** The anti-bot interstitial ("One more step… security check"): a captcha form. */
  captcha:
    '#challenge-form, .g-recaptcha, .h-captcha, iframe[src*="recaptcha"], iframe[src*="hcaptcha"]',
} as const;

/** Text marks, as regular expression sources (case-insensitive). */
export const TEXTS = {
  noResults: '\\bno results\\b',
  /** In the title or a heading of a page that is not a snapshot. */
  interstitial: 'one more step|security check|are you a robot|verify you are human|captcha',
  /** A save in progress lives under this path until the snapshot is ready. */
  wipPath: '/wip/',
} as const;

/** How often a person who has just typed or pasted into a field submits with Enter. */
export const ENTER_PROBABILITY = 0.7;

/** archive/save has no paste parameter: people mostly paste a link they copied. */
export const SAVE_PASTE_PROBABILITY = 0.9;

/** The archive's address without a trailing slash. */
export function baseUrl(ctx: PluginContext): string {
  const value = ctx.setting('ARCHIVE_BASE_URL') ?? 'https://archive.today';
  return value.replace(/\/+$/, '');
}

/** The archive's list of snapshots of `url`: the address followed by the URL, as typed. */
export const lookupUrl = (base: string, url: string): string => `${base}/${url}`;

/** Milliseconds archive/save follows a save in progress (ARCHIVE_SAVE_WAIT_S). */
export function saveWaitMs(ctx: PluginContext): number {
  const seconds = Number(ctx.setting('ARCHIVE_SAVE_WAIT_S'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 150_000;
}
