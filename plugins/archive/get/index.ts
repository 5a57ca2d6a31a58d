import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, definePlugin, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { ArchivePage } from '../page-state';
import { describePage, refuseInterstitial, settledPage } from '../page-state';
import { SELECTORS, baseUrl, lookupUrl } from '../site';

/** The manifest requires url unless from_check is true. */
type GetParams = { from_check: true; url?: string } | { from_check: false; url: string };

const LIST = 'the result list of snapshots left by archive/check';

/** The result list on screen, left by archive/check. */
async function listFromCheck(ctx: PluginContext): Promise<ArchivePage> {
  const page = await settledPage(ctx);
  refuseInterstitial(page, LIST);
  if (page.links.length === 0) {
    const found = page.noResults
      ? `${describePage(page)}: the URL is not archived`
      : describePage(page);
    throw new SiteError(LIST, found);
  }
  return page;
}

/** Opens the newest snapshot of the list on screen and reads it. */
async function readNewest(ctx: PluginContext, list: ArchivePage, url: string | undefined) {
  // The archive lists snapshots from newer to older: the first row is the newest.
  const nav = await ctx.page.navigationAfter(() =>
    clickOnScreen(ctx, SELECTORS.resultLink, 'the newest snapshot’s link'),
  );
  if (!nav) throw new SiteError('the snapshot page after its link', `${ctx.page.url()} stayed put`);
  const snap = await settledPage(ctx);
  refuseInterstitial(snap, 'the snapshot page');
  if (!snap.snapshot) throw new SiteError('the snapshot page', describePage(snap));
  const count = list.links.length;
  return {
    url: url ?? snap.savedFrom ?? '',
    archive_url: snap.url,
    page_title: snap.title,
    page_content: (await ctx.page.text(SELECTORS.content)) ?? '',
    message: `Newest of ${count} snapshot${count === 1 ? '' : 's'}`,
  };
}

export default definePlugin<GetParams>({
  async run(ctx, p) {
    if (p.from_check) return readNewest(ctx, await listFromCheck(ctx), p.url);
    const url = p.url;
    await ctx.page.goto(lookupUrl(baseUrl(ctx), url));
    const list = await settledPage(ctx);
    refuseInterstitial(list, `the archive's answer for ${url}`);
    if (list.links.length > 0) return readNewest(ctx, list, url);
    if (!list.noResults) throw new SiteError(`the archive's answer for ${url}`, describePage(list));
    return {
      url,
      archive_url: null,
      page_title: null,
      page_content: null,
      message: 'Not archived: the archive has no snapshot of this URL',
    };
  },
});
