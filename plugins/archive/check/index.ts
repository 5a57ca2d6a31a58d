import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, definePlugin } from '@persona-browser/plugin-sdk';
import { fillField, submitForm } from '../human';
import type { ArchivePage } from '../page-state';
import { describePage, refuseInterstitial, settledPage } from '../page-state';
import { SELECTORS, baseUrl, lookupUrl } from '../site';

interface CheckParams {
  url: string;
  direct_nav_probability: number;
  paste_probability: number;
}

type Method = 'direct_nav' | 'search_form';

/** Types or pastes the URL into the home page's search form and submits it. */
async function searchFromHome(ctx: PluginContext, p: CheckParams): Promise<void> {
  await ctx.page.goto(`${baseUrl(ctx)}/`);
  const home = await settledPage(ctx);
  refuseInterstitial(home, "the archive's home page with its search form");
  if (!home.searchForm) {
    throw new SiteError("the archive's home page with its search form", describePage(home));
  }
  await fillField(ctx, SELECTORS.searchInput, p.url, p.paste_probability, 'the search field');
  await submitForm(ctx, SELECTORS.searchButton, 'the search form', true);
}

/**
 * Whether the answer is archived, and whether the page's two signs (result rows, a "No
 * results" notice) disagree: both at once, or neither, makes the answer a guess.
 */
function verdict(page: ArchivePage): { is_archived: boolean; wtf: boolean } {
  const rows = page.links.length > 0;
  return { is_archived: rows, wtf: rows === page.noResults };
}

export default definePlugin<CheckParams>({
  async run(ctx, p) {
    const method: Method = ctx.chance(p.direct_nav_probability) ? 'direct_nav' : 'search_form';
    if (method === 'direct_nav') await ctx.page.goto(lookupUrl(baseUrl(ctx), p.url));
    else await searchFromHome(ctx, p);
    const page = await settledPage(ctx);
    refuseInterstitial(page, `the archive's answer for ${p.url}`);
    const { is_archived, wtf } = verdict(page);
    if (wtf)
      ctx.log.warn('archive page gives mixed signs', { url: p.url, page: describePage(page) });
    // The page stays where it is: archive/save and archive/get continue from it.
    return { url: p.url, is_archived, wtf, method };
  },
});
