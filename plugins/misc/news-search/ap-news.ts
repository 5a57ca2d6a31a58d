import type { PluginContext } from '@persona-browser/plugin-sdk';

/**
 * AP News (apnews.com) as misc/news-search knows it: where it is, how its search URL is made,
 * and the marks of its pages. Every selector the plugin uses is here, so that a change of the
 * site's markup is one edit.
 *
 * The home page's header has a magnifier button that opens a search overlay; the overlay's
 * form sends `q` to `/search` (GET), the same address a direct visit uses. The results page
 * lists articles as promos, with a count ("1,234 results") and a notice when nothing matches.
 * A OneTrust consent banner may sit over the page on a first visit.
 */

export const SITE_NAME = 'AP News';

export const SELECTORS = {
  /** OneTrust's "accept" button on the consent banner of a first visit. */
  consentAccept: '#onetrust-accept-btn-handler',
  /** The header's magnifier: shows the search overlay. */
  searchToggle: 'button.SearchOverlay-search-button',
  /** The overlay's text field (name `q`); Enter submits its form. */
  searchInput: 'input.SearchOverlay-search-input',
  /** One article of the result list, and its headline. */
  resultItem: '.SearchResultsModule-results .PageList-items-item',
  resultTitle: '.SearchResultsModule-results .PageList-items-item .PagePromo-title',
  /** "1,234 results" above the list. */
  resultCount: '.SearchResultsModule-count-desktop',
  /** "There are no results that match your search." */
  noResults: '.SearchResultsModule-noResults',
} as const;

/** The site's address (NEWS_BASE_URL, default https://apnews.com) without a trailing slash. */
export function baseUrl(ctx: PluginContext): string {
  const value = ctx.setting('NEWS_BASE_URL') ?? 'https://apnews.com';
  return value.replace(/\/+$/, '');
}

/** The results page for `query`, with `q` encoded as the search form would send it. */
export function resultsUrl(base: string, query: string): string {
  const url = new URL(`${base}/search`);
  url.searchParams.set('q', query);
  return url.href;
}

/** A query that starts with a scheme and `//` is a URL to open, not words to search for. */
export const looksLikeUrl = (query: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(query);

const siteHost = (url: URL): string => `${url.hostname.replace(/^www\./, '')}:${url.port}`;

/** Whether `url` is on the site: the same host (with or without `www.`) and port. */
export function isOnSite(url: string, base: string): boolean {
  try {
    return siteHost(new URL(url)) === siteHost(new URL(base));
  } catch {
    return false;
  }
}

/** What the page shows, for a SiteError's "found": its title and address. */
export async function describePage(ctx: PluginContext): Promise<string> {
  return `a page titled ${JSON.stringify(await ctx.page.title())} at ${ctx.page.url()}`;
}
