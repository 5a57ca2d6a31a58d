import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { SiteCheck, flatTable } from '../../../site-marks';
import { openSection } from '../navigation';
import type { BankAPage } from '../page-state';
import { LOGGED_IN, describePage, readUntil, shownPeriod, stateOf } from '../page-state';
import type { Section } from '../site';
import { COLUMNS, CUSTOM_LABEL, SELECTORS, baseUrl } from '../site';

interface Params {
  wait_s: number;
}

const TABLE = flatTable(SELECTORS);

/**
 * What the check looks for, by page: names of SELECTORS (site.ts). Not here: the login and
 * confirmation pages' marks (reaching them ends the session; hydrate-login and read-qr say
 * what they miss) and `loading`, `filterError` (shown only while a list loads, or after a
 * refused period).
 */
export const AREA = ['logout', 'logo', 'menu', 'menuLink.home', 'menuLink.conto', 'menuLink.carta'];
export const LIST = [
  'productName',
  'productNumber',
  'productBalance',
  'periodSelect',
  'customDates',
  'fromInput',
  'toInput',
  'searchButton',
  'shownPeriod',
  'table',
  'pageIndicator',
  'nextButton',
  'previousButton',
];
/** The columns leggi-movimenti cannot do without (value date and balance are optional). */
export const NEEDED_COLUMNS = ['date', 'description', 'amount'] as const;

/** The headings' text marks, the period selector's custom choice, the shown period's dates. */
function textMarks(check: SiteCheck, where: string, p: BankAPage): void {
  const headers = p.list?.headers ?? [];
  for (const c of NEEDED_COLUMNS) {
    const found = COLUMNS[c].some((n) => headers.some((h) => h.startsWith(n)));
    check.record(`COLUMNS.${c}`, 'text', where, found);
  }
  const options = p.list?.select?.options ?? [];
  const custom = options.some((o) => o.toLowerCase() === CUSTOM_LABEL.toLowerCase());
  check.record('CUSTOM_LABEL', 'text', where, custom);
  check.record('PATTERNS.date', 'text', where, !!p.list && shownPeriod(p.list) !== null);
  check.record('PATTERNS.pageOf', 'text', where, p.list?.page != null);
}

/**
 * A section's page by its menu link, as vai-a-conto and vai-a-carta open it (by the address
 * that link names when the link is gone, so the page's own marks are still checked); then
 * its marks.
 */
async function checkSection(
  ctx: PluginContext,
  check: SiteCheck,
  from: BankAPage,
  section: Section,
  waitMs: number,
): Promise<BankAPage> {
  const where = `${section} page`;
  let page: BankAPage | null = null;
  if (await ctx.page.exists(SELECTORS.menuLink[section])) {
    try {
      page = await openSection(ctx, from, section, []);
    } catch (err) {
      if (!(err instanceof SiteError)) throw err;
    }
  }
  if (!page) await ctx.page.goto(`${baseUrl(ctx)}/${section}`);
  // The list comes by XHR a moment after the page.
  page = await readUntil(
    ctx,
    (pg) => !!pg.list && !pg.list.busy && pg.list.rows.length > 0,
    waitMs,
  );
  const there = stateOf(page) === `logged_in_${section}`;
  check.record(`PATHS.sections.${section}`, 'text', where, there);
  await check.selectors(ctx, where, 'SELECTORS', TABLE, LIST, '', waitMs);
  textMarks(check, where, page);
  return page;
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const check = new SiteCheck();
    const waitMs = p.wait_s * 1000;
    // Reads only: the home by its address, the sections by the menu's links. No form is
    // filled or submitted, the period is left as the site shows it.
    await ctx.page.goto(`${baseUrl(ctx)}/home`);
    const home = await readUntil(
      ctx,
      (pg) => pg.loggedIn || !!pg.login || !!pg.confirmation,
      waitMs,
    );
    if (home.login || home.confirmation || !home.onSite) {
      throw new SiteError('a logged-in page of bank-a', describePage(home));
    }
    await check.selectors(ctx, 'home', 'SELECTORS', TABLE, AREA, '', waitMs);
    if (!LOGGED_IN.includes(stateOf(home))) {
      // Without its logged-in marks the sections cannot be told apart: the rest is unknown.
      return check.answer('bank-a');
    }
    const conto = await checkSection(ctx, check, home, 'conto', waitMs);
    await checkSection(ctx, check, conto, 'carta', waitMs);
    return check.answer('bank-a');
  },
});
