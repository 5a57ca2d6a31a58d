import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { Movement } from '../italian';
import { currencyIn, parseAmount, parseDate } from '../italian';
import type { BankAPage, ListView } from './page-state';
import { WITH_MOVEMENTS, describePage, readUntil, requireState } from './page-state';
import { COLUMNS, SELECTORS } from './site';

/** A page of the list comes by XHR a moment after the click. */
const LIST_WAIT_MS = 15_000;

/** The page with its list loaded (no page in flight); refuses a page that has none. */
export async function settledList(ctx: PluginContext): Promise<BankAPage & { list: ListView }> {
  const page = await readUntil(ctx, (p) => !p.list?.busy, LIST_WAIT_MS);
  requireState(page, WITH_MOVEMENTS);
  const { list } = page;
  if (!list || list.busy) {
    throw new SiteError('the movements list loaded', describePage(page));
  }
  return { ...page, list };
}

/**
 * Clicks "Successiva" or "Precedente" below the list and waits for the page it loads into the
 * same document. A session that expired meanwhile sends the site to its login: refused with
 * that state.
 */
export async function turnPage(
  ctx: PluginContext,
  from: ListView,
  direction: 'next' | 'previous',
): Promise<BankAPage & { list: ListView }> {
  const want = (from.page ?? 1) + (direction === 'next' ? 1 : -1);
  const [selector, label] =
    direction === 'next'
      ? [SELECTORS.nextButton, '"Successiva" below the movements']
      : [SELECTORS.previousButton, '"Precedente" below the movements'];
  await clickOnScreen(ctx, selector, label);
  const page = await readUntil(
    ctx,
    (p) => !p.list || !!p.list.filterError || (!p.list.busy && p.list.page === want),
    LIST_WAIT_MS,
  );
  requireState(page, WITH_MOVEMENTS);
  const list = page.list;
  if (!list || list.page !== want) {
    const shows = list?.filterError ? `the message "${list.filterError}"` : `page ${list?.page}`;
    throw new SiteError(`page ${want} of the movements after ${label}`, `${shows} at ${page.url}`);
  }
  return { ...page, list };
}

/** The index of the first heading named as one of `names` (exact first, then its start). */
function column(headers: string[], names: readonly string[], taken: number[]): number {
  const free = (i: number): boolean => i >= 0 && !taken.includes(i);
  for (const n of names) {
    const i = headers.findIndex((h, k) => free(k) && h === n);
    if (i >= 0) return i;
  }
  for (const n of names) {
    const i = headers.findIndex((h, k) => free(k) && h.startsWith(n));
    if (i >= 0) return i;
  }
  return -1;
}

/** The columns of the list's table; refuses a table without a date, description or amount. */
function columnsOf(list: ListView, url: string) {
  const valueDate = column(list.headers, COLUMNS.valueDate, []);
  const date = column(list.headers, COLUMNS.date, [valueDate]);
  const description = column(list.headers, COLUMNS.description, [valueDate, date]);
  const amount = column(list.headers, COLUMNS.amount, [valueDate, date, description]);
  const balance = column(list.headers, COLUMNS.balance, [valueDate, date, description, amount]);
  if (date < 0 || description < 0 || amount < 0) {
    throw new SiteError(
      'a movements table with date, description and amount columns',
      `the columns ${JSON.stringify(list.headers)} at ${url}`,
    );
  }
  return { date, valueDate, description, amount, balance };
}

/** The rows on screen as movements, in the site's order. */
export function movementsOf(list: ListView, url: string, currency: string | null): Movement[] {
  const c = columnsOf(list, url);
  const cell = (row: string[], i: number): string => (i >= 0 ? (row[i] ?? '') : '');
  return list.rows.map((row, n) => {
    const date = parseDate(cell(row, c.date));
    const amountText = cell(row, c.amount);
    const amount = parseAmount(amountText);
    if (!date || amount === null) {
      throw new SiteError(
        'a movement with a date and an amount',
        `row ${n + 1} reading ${JSON.stringify(row)} at ${url}`,
      );
    }
    const balanceText = cell(row, c.balance);
    return {
      date,
      value_date: c.valueDate >= 0 ? parseDate(cell(row, c.valueDate)) : null,
      description: cell(row, c.description),
      amount,
      currency: currencyIn(amountText) ?? currency,
      balance: balanceText === '' ? null : parseAmount(balanceText),
    };
  });
}

/** An account or card number with every digit but the last four hidden. */
export function maskNumber(text: string): string {
  const digits = (text.match(/\d/g) ?? []).length;
  let seen = 0;
  return text.replace(/\d/g, (d) => {
    seen += 1;
    return seen > digits - 4 ? d : '*';
  });
}
