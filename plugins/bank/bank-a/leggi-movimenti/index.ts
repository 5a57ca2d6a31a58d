import { definePlugin } from '@persona-browser/plugin-sdk';
import { currencyIn, totalsOf } from '../../italian';
import type { Movement } from '../../italian';
import { maskNumber, movementsOf, settledList, turnPage } from '../movements';
import { shownPeriod, stateOf } from '../page-state';

interface Params {
  max_pages: number;
}

export default definePlugin<Params>({
  async run(ctx, p) {
    let page = await settledList(ctx);
    // The list may have been left on a later page: its first page comes first.
    for (
      let back = 0;
      (page.list.page ?? 1) > 1 && page.list.hasPrevious && back < 100;
      back += 1
    ) {
      page = await turnPage(ctx, page.list, 'previous');
    }
    const product = page.product;
    const currency =
      currencyIn(product?.balance ?? '') ?? currencyIn(page.list.rows[0]?.join(' ') ?? '');
    const movements: Movement[] = [];
    let pagesRead = 0;
    for (;;) {
      movements.push(...movementsOf(page.list, page.url, currency));
      pagesRead += 1;
      if (!page.list.hasNext || pagesRead >= p.max_pages) break;
      page = await turnPage(ctx, page.list, 'next');
    }
    const complete = !page.list.hasNext;
    const period = shownPeriod(page.list);
    const state = stateOf(page);
    const what = state === 'logged_in_carta' ? 'card' : 'account';
    return {
      state,
      account: product?.label
        ? {
            label: product.label,
            number_masked: product.number ? maskNumber(product.number) : null,
          }
        : null,
      period,
      currency,
      count: movements.length,
      movements,
      totals: totalsOf(movements.map((m) => m.amount)),
      pages_read: pagesRead,
      complete,
      page_url: page.url,
      message:
        `${movements.length} ${what} movement(s) from ${pagesRead} page(s)` +
        (period ? `, ${period.from} to ${period.to}` : '') +
        (complete ? '' : `; stopped at max_pages ${p.max_pages}, more pages follow`),
    };
  },
});
