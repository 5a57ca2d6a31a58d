import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin } from '@persona-browser/plugin-sdk';
import { totalsOf } from '../../italian';
import { clickToPage } from '../human';
import type { Movement } from '../../italian';
import { currencyOf, movementsOnPage, selectedAccount, shownPeriod } from '../movements';
import type { BankBPage } from '../page-state';
import { chainFields, readPage, requireState } from '../page-state';

interface Params {
  max_pages: number;
}

const currentPage = (p: BankBPage): number => p.conti?.pages.find((l) => l.current)?.n ?? 1;

/** Follows a numbered page link like a person (scrolled into view, clicked) to a new document. */
async function openPage(ctx: PluginContext, from: BankBPage, n: number): Promise<BankBPage> {
  const link = from.conti?.pages.find((l) => l.n === n);
  if (!link) return from;
  await clickToPage(ctx, link.selector, `the link to page ${n} of the movements`);
  const page = await readPage(ctx);
  // A session that ended meanwhile lands on the login page: said with its state and hint.
  requireState(page, 'logged_in_conti');
  return page;
}

export default definePlugin<Params>({
  async run(ctx, params) {
    let page = await readPage(ctx);
    requireState(page, 'logged_in_conti');
    // The list is read from its first page.
    if (currentPage(page) !== 1) page = await openPage(ctx, page, 1);

    const movements: Movement[] = [];
    let pages_read = 0;
    for (;;) {
      movements.push(...movementsOnPage(page.conti!, page.url));
      pages_read += 1;
      const next = currentPage(page) + 1;
      const hasNext = page.conti!.pages.some((l) => l.n === next);
      if (!hasNext || pages_read >= params.max_pages) break;
      page = await openPage(ctx, page, next);
    }
    const conti = page.conti!;
    const complete = !conti.pages.some((l) => l.n === currentPage(page) + 1);
    const account = selectedAccount(conti);
    const period = shownPeriod(conti);
    const { state, page_url } = chainFields(page);
    return {
      state,
      account,
      period,
      currency: currencyOf(conti),
      count: movements.length,
      movements,
      totals: totalsOf(movements.map((m) => m.amount)),
      pages_read,
      complete,
      page_url,
      message:
        `${movements.length} movement(s)${account ? ` of ${account.label}` : ''}` +
        `${period ? ` from ${period.from} to ${period.to}` : ''} on ${pages_read} page(s)` +
        `${complete ? '' : `; stopped at max_pages ${params.max_pages}, more pages follow`}`,
    };
  },
});
