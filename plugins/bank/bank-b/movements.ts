import { SiteError } from '@persona-browser/plugin-sdk';
import type { Movement } from '../italian';
import { currencyIn, parseAmount, parseDate } from '../italian';
import type { BankBPage } from './page-state';
import { COLUMNS, PATTERNS } from './site';

type Conti = NonNullable<BankBPage['conti']>;

/** The selected account, as its tab shows it; null when the page shows no tabs. */
export function selectedAccount(c: Conti): { label: string; number_masked: string } | null {
  const tab =
    c.accounts.find((a) => a.selected) ?? (c.accounts.length === 1 ? c.accounts[0] : null);
  return tab ? { label: tab.label, number_masked: tab.number_masked } : null;
}

/** The period the page shows ("Movimenti dal … al …"), ISO; null when it shows none. */
export function shownPeriod(c: Conti): { from: string; to: string } | null {
  const m = new RegExp(PATTERNS.periodLine, 'i').exec(c.periodText ?? '');
  const from = m?.[1] ? parseDate(m[1]) : null;
  const to = m?.[2] ? parseDate(m[2]) : null;
  return from && to ? { from, to } : null;
}

/** "Importi in EUR" → EUR; null when the page names no currency. */
export const currencyOf = (c: Conti): string | null => currencyIn(c.currencyText ?? '');

/** Where each column is, by its header; a SiteError when one the plugin needs is missing. */
function columnIndex(c: Conti, url: string): Record<keyof typeof COLUMNS, number> {
  const headers = c.columns.map((h) => h.toLowerCase());
  const at = (start: string): number => headers.findIndex((h) => h.startsWith(start));
  const index = {
    date: at(COLUMNS.date),
    value_date: at(COLUMNS.value_date),
    description: at(COLUMNS.description),
    debit: at(COLUMNS.debit),
    credit: at(COLUMNS.credit),
    balance: at(COLUMNS.balance),
  };
  if (index.date < 0 || index.description < 0 || index.debit < 0 || index.credit < 0) {
    throw new SiteError(
      'the movements table with Data operazione, Descrizione, Addebiti and Accrediti columns',
      `columns ${JSON.stringify(c.columns)} at ${url}`,
    );
  }
  return index;
}

/** The movements of the page on screen, in the order the site lists them. */
export function movementsOnPage(c: Conti, url: string): Movement[] {
  const col = columnIndex(c, url);
  const currency = currencyOf(c);
  const out: Movement[] = [];
  for (const cells of c.rows) {
    // "Nessun movimento nel periodo selezionato": one cell across the table.
    if (cells.length < c.columns.length) continue;
    const cell = (i: number): string => (i >= 0 ? (cells[i] ?? '') : '');
    const date = parseDate(cell(col.date));
    const debit = cell(col.debit) ? parseAmount(cell(col.debit)) : null;
    const credit = cell(col.credit) ? parseAmount(cell(col.credit)) : null;
    // The site shows debits as positive figures in their own column.
    const amount = debit !== null ? -Math.abs(debit) : credit !== null ? Math.abs(credit) : null;
    if (!date || amount === null) {
      throw new SiteError(
        'a movement row with a date and an amount in Addebiti or Accrediti',
        `the row ${JSON.stringify(cells)} at ${url}`,
      );
    }
    const balanceText = cell(col.balance);
    out.push({
      date,
      value_date: cell(col.value_date) ? parseDate(cell(col.value_date)) : null,
      description: cell(col.description),
      amount,
      currency,
      balance: balanceText ? parseAmount(balanceText) : null,
    });
  }
  return out;
}
