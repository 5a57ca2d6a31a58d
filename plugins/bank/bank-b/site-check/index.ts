import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { SiteCheck } from '../../../site-marks';
import { clickToPage } from '../human';
import { shownPeriod } from '../movements';
import type { BankBPage } from '../page-state';
import { describePage, readPage, readUntil } from '../page-state';
import { COLUMNS, PATTERNS, SELECTORS, baseUrl } from '../site';

interface Params {
  wait_s: number;
}

/**
 * What the check looks for, by page: names of SELECTORS (site.ts). Not here: the login and
 * code pages' marks (reaching them ends the session; hydrate-login says what it misses),
 * `periodError` (shown only after a refused period) and `pageLink` unless the list fills a
 * page (a period with one page of movements has no page links).
 */
export const AREA = ['menu', 'menuAccounts', 'heading'];
export const CONTI = [
  'accountTab',
  'periodForm',
  'from',
  'to',
  'quickLink',
  'apply',
  'periodShown',
  'currency',
  'headerCell',
  'row',
];
/** Inside an account tab. */
export const TAB = ['accountLabel', 'accountNumber'];
/** The columns leggi-movimenti cannot do without (value date and balance are optional). */
export const NEEDED_COLUMNS = ['date', 'description', 'debit', 'credit'] as const;
/** The site lists this many movements a page: a full page may have page links. */
const ROWS_PER_PAGE = 15;

function textMarks(check: SiteCheck, where: string, p: BankBPage): void {
  const heading = new RegExp(PATTERNS.accountsHeading, 'i').test(p.heading ?? '');
  check.record('PATTERNS.accountsHeading', 'text', where, heading);
  const headers = (p.conti?.columns ?? []).map((h) => h.toLowerCase());
  for (const c of NEEDED_COLUMNS) {
    check.record(
      `COLUMNS.${c}`,
      'text',
      where,
      headers.some((h) => h.startsWith(COLUMNS[c])),
    );
  }
  check.record('PATTERNS.periodLine', 'text', where, !!p.conti && shownPeriod(p.conti) !== null);
}

/** "I miei conti" by the menu's entry, as vai-a-conti opens it (by its address without it). */
async function openConti(ctx: PluginContext): Promise<void> {
  if (await ctx.page.exists(SELECTORS.menuAccounts)) {
    try {
      await clickToPage(ctx, SELECTORS.menuAccounts, '"I miei conti" in the main menu');
      return;
    } catch (err) {
      if (!(err instanceof SiteError)) throw err;
    }
  }
  await ctx.page.goto(`${baseUrl(ctx)}/conti`);
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const check = new SiteCheck();
    const waitMs = p.wait_s * 1000;
    // Reads only: the home by its address, "I miei conti" by the menu's link. The period
    // form is neither filled nor applied; no page of payments is opened.
    await ctx.page.goto(`${baseUrl(ctx)}/home`);
    const home = await readUntil(ctx, (pg) => pg.menu || !!pg.login || !!pg.otp, waitMs);
    if (home.login || home.otp || !home.onSite) {
      throw new SiteError('a logged-in page of bank-b', describePage(home));
    }
    await check.selectors(ctx, 'home', 'SELECTORS', SELECTORS, AREA, '', waitMs);
    await openConti(ctx);
    const where = '"I miei conti"';
    await check.selectors(ctx, where, 'SELECTORS', SELECTORS, CONTI, '', waitMs);
    await check.selectors(ctx, where, 'SELECTORS', SELECTORS, TAB, SELECTORS.accountTab);
    const page = await readPage(ctx);
    if ((page.conti?.rows.length ?? 0) >= ROWS_PER_PAGE) {
      await check.selectors(ctx, where, 'SELECTORS', SELECTORS, ['pageLink'], '', waitMs);
    }
    textMarks(check, where, page);
    return check.answer('bank-b');
  },
});
