import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { SELECTORS, baseUrl, lookupUrl } from '../site';
import { SiteCheck } from '../../site-marks';

interface Params {
  url: string;
  wait_s: number;
}

/** What the check looks for on each page: names of SELECTORS (site.ts). */
export const HOME = ['searchInput', 'searchButton', 'saveInput', 'saveButton'];
export const RESULTS = ['content', 'resultRow', 'resultLink'];
export const NO_RESULTS = ['content', 'archiveInput', 'archiveButton'];
export const SNAPSHOT = ['snapshotMark', 'savedFrom'];

export default definePlugin<Params>({
  async run(ctx, p) {
    const check = new SiteCheck();
    const waitMs = p.wait_s * 1000;
    const base = baseUrl(ctx);
    const refuseCaptcha = async (where: string): Promise<void> => {
      if (await ctx.page.exists(SELECTORS.captcha)) {
        throw new SiteError(`the archive's ${where}`, `the anti-bot check at ${ctx.page.url()}`);
      }
    };
    await ctx.page.goto(`${base}/`);
    await refuseCaptcha('home page');
    await check.selectors(ctx, 'home', 'SELECTORS', SELECTORS, HOME, '', waitMs);
    // The lookup of a URL: its snapshot list, or the "No results" page with its save form.
    await ctx.page.goto(lookupUrl(base, p.url));
    await refuseCaptcha('lookup');
    const where = `lookup of ${p.url}`;
    const rows = await ctx.page.exists(SELECTORS.resultRow);
    await check.selectors(
      ctx,
      where,
      'SELECTORS',
      SELECTORS,
      rows ? RESULTS : NO_RESULTS,
      '',
      waitMs,
    );
    const href = rows ? await ctx.page.attr(SELECTORS.resultLink, 'href') : null;
    if (href) {
      await ctx.page.goto(new URL(href, ctx.page.url()).href);
      await check.selectors(ctx, 'snapshot', 'SELECTORS', SELECTORS, SNAPSHOT, '', waitMs);
    }
    return check.answer('archive');
  },
});
