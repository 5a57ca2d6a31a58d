import type { NavigationResult, PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import {
  SELECTORS as S,
  SITE_NAME,
  baseUrl,
  describePage,
  isOnSite,
  looksLikeUrl,
  resultsUrl,
} from './ap-news';

interface Params {
  query: string;
  direct_access_probability: number;
  paste_probability: number;
}

/** A type, not an interface: a plugin's result must be a plain record. */
type Answer = {
  /** `direct_url`: the query was a URL of the site; else how the results were reached. */
  method: 'direct_url' | 'direct_access' | 'search_box';
  /** The address opened, or the results address the search box led to. */
  url: string;
  query: string;
  /** Where the page is once the call ends (after any redirect). */
  page_url: string;
  message: string;
};

/** The header is in the first HTML the site sends: a few seconds is plenty. */
const SEARCH_BOX_WAIT_MS = 5_000;
/** The overlay opens with a short animation. */
const OVERLAY_WAIT_MS = 3_000;
const SUBMIT_WAIT_MS = 10_000;
/** The result list is rendered on the server, so it is there once the document is. */
const RESULTS_WAIT_MS = 8_000;
const POLL_MS = 150;

/** A page the site answered with an error status is not the page that was asked for. */
async function expectLoaded(
  ctx: PluginContext,
  nav: NavigationResult,
  expected: string,
): Promise<void> {
  if (nav.status_code !== null && nav.status_code >= 400) {
    throw new SiteError(expected, `HTTP ${nav.status_code}: ${await describePage(ctx)}`);
  }
}

async function waitVisible(
  ctx: PluginContext,
  selector: string,
  visible: boolean,
  ms: number,
): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if ((await ctx.gestures.checkVisible(selector)).visible === visible) return true;
    if (Date.now() >= until) return false;
    await ctx.sleep(POLL_MS);
  }
}

/** A first visit may get the consent banner: a person accepts it before doing anything else. */
async function acceptConsent(ctx: PluginContext): Promise<void> {
  if (!(await ctx.gestures.checkVisible(S.consentAccept)).visible) return;
  await ctx.gestures.click(S.consentAccept);
  await waitVisible(ctx, S.consentAccept, false, OVERLAY_WAIT_MS);
  ctx.log.info('accepted the consent banner');
}

/** The result list's headlines, said in one sentence; a page that is neither is a SiteError. */
async function readResults(ctx: PluginContext, query: string): Promise<string> {
  const shown = await ctx.page.waitForAny(
    { results: S.resultItem, none: S.noResults },
    RESULTS_WAIT_MS,
  );
  if (shown === null) {
    throw new SiteError(
      `${SITE_NAME}'s search results (${S.resultItem}) or its no-results notice (${S.noResults})`,
      await describePage(ctx),
    );
  }
  if (shown === 'none') return `No results for ${JSON.stringify(query)}`;
  const titles = await ctx.page.texts(S.resultTitle);
  const count = await ctx.page.text(S.resultCount);
  const counted = count ? ` (the site counts ${JSON.stringify(count)})` : '';
  const first = titles[0] ? `; the first is ${JSON.stringify(titles[0])}` : '';
  const n = titles.length;
  return `Read ${n} headline${n === 1 ? '' : 's'} for ${JSON.stringify(query)}${counted}${first}`;
}

async function openSiteUrl(ctx: PluginContext, base: string, url: string): Promise<Answer> {
  if (!isOnSite(url, base)) throw new SiteError(`a URL of ${SITE_NAME} (${base})`, url);
  const nav = await ctx.page.goto(url);
  await expectLoaded(ctx, nav, `the page at ${url}`);
  const title = await ctx.page.title();
  return {
    method: 'direct_url',
    url,
    query: url,
    page_url: ctx.page.url(),
    message: `Opened ${JSON.stringify(title)}`,
  };
}

async function directAccess(ctx: PluginContext, base: string, query: string): Promise<Answer> {
  const url = resultsUrl(base, query);
  const nav = await ctx.page.goto(url);
  await expectLoaded(ctx, nav, `${SITE_NAME}'s search results at ${url}`);
  const message = await readResults(ctx, query);
  return { method: 'direct_access', url, query, page_url: ctx.page.url(), message };
}

/** Shows the header's search box if it is hidden behind the magnifier, and clicks into it. */
async function focusSearchBox(ctx: PluginContext): Promise<void> {
  const box = await ctx.page.waitForAny(
    { input: S.searchInput, toggle: S.searchToggle },
    SEARCH_BOX_WAIT_MS,
  );
  if (box === null) {
    throw new SiteError(
      `${SITE_NAME}'s search box (${S.searchToggle} or ${S.searchInput})`,
      await describePage(ctx),
    );
  }
  await acceptConsent(ctx);
  if (!(await ctx.gestures.checkVisible(S.searchInput)).visible) {
    if (!(await ctx.page.exists(S.searchToggle))) {
      throw new SiteError(
        `the search button (${S.searchToggle}) that shows the hidden search box`,
        await describePage(ctx),
      );
    }
    await ctx.gestures.click(S.searchToggle);
    if (!(await waitVisible(ctx, S.searchInput, true, OVERLAY_WAIT_MS))) {
      throw new SiteError(
        'the search box to open after a click on the search button',
        `it stayed hidden at ${ctx.page.url()}`,
      );
    }
  }
  await ctx.gestures.click(S.searchInput);
}

async function viaSearchBox(
  ctx: PluginContext,
  base: string,
  query: string,
  pasteProbability: number,
): Promise<Answer> {
  const home = await ctx.page.goto(`${base}/`);
  await expectLoaded(ctx, home, `${SITE_NAME}'s home page`);
  await focusSearchBox(ctx);
  const pasted = ctx.chance(pasteProbability);
  if (pasted) await ctx.gestures.paste(query);
  else await ctx.gestures.type(query);
  const holds = await ctx.page.value(S.searchInput);
  if (holds !== query) {
    throw new SiteError(
      `the search box holding ${JSON.stringify(query)}`,
      `it holds ${JSON.stringify(holds)}`,
    );
  }
  const nav = await ctx.page.navigationAfter(() => ctx.gestures.pressEnter(), SUBMIT_WAIT_MS);
  if (!nav) {
    throw new SiteError(
      'the results page to load after Enter in the search box',
      `no new page: still ${await describePage(ctx)}`,
    );
  }
  await expectLoaded(ctx, nav, `${SITE_NAME}'s search results`);
  const results = await readResults(ctx, query);
  return {
    method: 'search_box',
    url: nav.final_url,
    query,
    page_url: ctx.page.url(),
    message: `${pasted ? 'Pasted' : 'Typed'} the query into the search box. ${results}`,
  };
}

export default definePlugin<Params>({
  validate(p) {
    const query = p.query.trim();
    if (!query) return 'query must not be blank';
    if (!looksLikeUrl(query)) return null;
    let protocol: string;
    try {
      protocol = new URL(query).protocol;
    } catch {
      return 'query starts like a URL but is not one';
    }
    return protocol === 'http:' || protocol === 'https:'
      ? null
      : 'query must be a search term or an http(s) URL of the news site';
  },
  async run(ctx, p) {
    const base = baseUrl(ctx);
    const query = p.query.trim();
    if (looksLikeUrl(query)) return openSiteUrl(ctx, base, query);
    if (ctx.chance(p.direct_access_probability)) {
      return directAccess(ctx, base, query);
    }
    return viaSearchBox(ctx, base, query, p.paste_probability);
  },
});
