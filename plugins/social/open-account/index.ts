import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { closeDialog } from '../human';
import type { SocialPage } from '../page-state';
import { describePage, readPage, readUntil, stateOf } from '../page-state';
import { SELECTORS, baseUrl, bareHandle, handleOfPath, isOnSite } from '../site';

interface Params {
  handle: string;
  paste_probability: number;
}

/** The search panel slides in; its results come from the site a moment after the last key. */
const PANEL_WAIT_MS = 5_000;
const RESULTS_WAIT_MS = 10_000;
/** A person glances at the list before picking. */
const SETTLE_MS = 400;
const LANDING_WAIT_MS = 15_000;

/** A login wall answers nothing about the site: the persona has to log in first. */
function refuseLoginWall(p: SocialPage, expected: string): void {
  if (p.loginWall) throw new SiteError(expected, describePage(p));
}

/** Closes what covers the left navigation; goes home if the page has none. */
async function reachNavigation(ctx: PluginContext): Promise<{ page: SocialPage; home: boolean }> {
  let page = await readPage(ctx);
  refuseLoginWall(page, 'a logged-in page of the site');
  if (page.post) page = await closeDialog(ctx, 'the open post');
  else if (page.list) page = await closeDialog(ctx, `the ${page.list.kind} list`);
  if (page.hasNav && isOnSite(ctx, page.url) && !page.story) return { page, home: false };
  await ctx.page.goto(`${baseUrl(ctx)}/`);
  page = await readUntil(ctx, (p) => p.hasNav || p.loginWall, PANEL_WAIT_MS);
  refuseLoginWall(page, "the site's home page");
  if (!page.hasNav) {
    throw new SiteError("the site's home page with its left navigation", describePage(page));
  }
  return { page, home: true };
}

/** Opens the search panel and enters `handle`; answers how it went in. */
async function searchFor(ctx: PluginContext, handle: string, pasteProbability: number) {
  await clickOnScreen(ctx, SELECTORS.searchEntry, 'the search entry of the left navigation');
  const panel = await ctx.page.waitForAny({ input: SELECTORS.searchInput }, PANEL_WAIT_MS);
  if (!panel) {
    throw new SiteError('the search panel with its input', describePage(await readPage(ctx)));
  }
  await clickOnScreen(ctx, SELECTORS.searchInput, 'the search input');
  // A panel reopened may still hold the last search: the new one replaces it.
  if ((await ctx.page.value(SELECTORS.searchInput)) !== '') await ctx.gestures.selectAll();
  const how = ctx.chance(pasteProbability) ? 'paste' : 'type';
  if (how === 'paste') await ctx.gestures.paste(handle);
  else await ctx.gestures.type(handle);
  const holds = await ctx.page.value(SELECTORS.searchInput);
  if (holds !== handle) {
    throw new SiteError(`the search input holding ${handle}`, `it holds ${JSON.stringify(holds)}`);
  }
  return how;
}

/** The results for what was typed, once the panel stops loading. */
async function results(ctx: PluginContext, handle: string): Promise<[string, ...string[]]> {
  await ctx.sleep(SETTLE_MS);
  const page = await readUntil(
    ctx,
    (p) => !!p.search && !p.search.loading && (p.search.results.length > 0 || p.search.noResults),
    RESULTS_WAIT_MS,
  );
  const [first, ...rest] = page.search?.results ?? [];
  if (first === undefined) {
    const what = page.search?.noResults
      ? `"No results found." in the search panel at ${page.url}: no account matches @${handle}`
      : `an empty search panel at ${page.url}`;
    throw new SiteError(`search results for @${handle}`, what);
  }
  return [first, ...rest];
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const handle = bareHandle(p.handle);
    const { home } = await reachNavigation(ctx);
    const input_method = await searchFor(ctx, handle, p.paste_probability);
    const hrefs = await results(ctx, handle);
    // The exact handle when the site lists it; else the site's best guess, the first result.
    const exact = hrefs.find((h) => handleOfPath(h) === handle);
    const href = exact ?? hrefs[0];
    const opened = handleOfPath(href);
    await clickOnScreen(ctx, `${SELECTORS.searchResult}[href="${href}"]`, `the result ${href}`);
    const landed = await readUntil(
      ctx,
      (pg) => stateOf(pg) === 'profile' && pg.profile?.handle === opened,
      LANDING_WAIT_MS,
    );
    refuseLoginWall(landed, `the profile of @${opened}`);
    const current_state = stateOf(landed);
    const current_handle = landed.profile?.handle ?? null;
    const message = exact
      ? `Opened @${opened}`
      : `No exact match for @${handle}: opened the first result, @${opened}`;
    return {
      handle,
      opened_handle: opened,
      current_handle,
      current_state,
      result_href: new URL(href, landed.url).href,
      input_method,
      navigated_home: home,
      page_url: landed.url,
      message:
        current_handle === opened && current_state === 'profile'
          ? message
          : `${message}, but the page shows ${describePage(landed)}`,
    };
  },
});
