/**
 * How Italian retail banks write money, dates and periods, read into numbers and ISO dates. Both
 * bank families share it; it is pure, so the unit tests cover every format here.
 */

/** An amount as a signed number: `-1.234,56 €`, `+12,00`, `1.234,56-`, `− 3,50`, `EUR 1.000`. */
export function parseAmount(text: string): number | null {
  const t = text.replace(/[\s\u00a0\u202f]/g, '');
  const m =
    /^([+\-\u2212]?)(?:[A-Z]{3}|[€$£])?([+\-\u2212]?)(\d{1,3}(?:\.\d{3})*|\d+)(,\d{1,2})?([+\-\u2212]?)(?:[A-Z]{3}|[€$£])?([+\-\u2212]?)$/.exec(
      t,
    );
  if (!m) return null;
  const signs = [m[1], m[2], m[5], m[6]].filter(Boolean);
  if (signs.length > 1) return null;
  const digits = m[3];
  if (digits === undefined) return null;
  const whole = digits.replace(/\./g, '');
  const cents = m[4] ? (m[4].slice(1) + '0').slice(0, 2) : '00';
  const value = Number(`${whole}.${cents}`);
  return signs[0] && signs[0] !== '+' ? -value : value;
}

const SYMBOLS: Record<string, string> = { '€': 'EUR', $: 'USD', '£': 'GBP' };
const CODES = /\b(EUR|USD|GBP|CHF|JPY|SEK|NOK|DKK|PLN|CZK|HUF|RON|CAD|AUD)\b/;

/** The currency a text names (`€`, `EUR`, `$`…) as its ISO code; null when it names none. */
export function currencyIn(text: string): string | null {
  const symbol = /[€$£]/.exec(text);
  if (symbol) return SYMBOLS[symbol[0]] ?? null;
  return CODES.exec(text)?.[1] ?? null;
}

const MONTHS = ['gen', 'feb', 'mar', 'apr', 'mag', 'giu', 'lug', 'ago', 'set', 'ott', 'nov', 'dic'];

const pad = (n: number): string => String(n).padStart(2, '0');

function isoOf(year: number, month: number, day: number): string | null {
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day)
    return null;
  return `${year}-${pad(month)}-${pad(day)}`;
}

/**
 * A calendar day as ISO `YYYY-MM-DD`: `23/11/2026`, `23-11-2026`, `23.11.2026`, `23/11/26`,
 * `23 nov 2026`, `23 novembre 2026`, or ISO itself. Null when it is none of them or no real day.
 */
export function parseDate(text: string): string | null {
  const t = text.trim().toLowerCase();
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  if (m) return isoOf(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{2}|\d{4})$/.exec(t);
  if (m) {
    const y = Number(m[3]);
    return isoOf(m[3]!.length === 2 ? 2000 + y : y, Number(m[2]), Number(m[1]));
  }
  m = /^(\d{1,2})\s+([a-z]{3})[a-z]*\.?\s+(\d{4})$/.exec(t);
  if (m) {
    const month = MONTHS.indexOf(m[2] ?? '');
    return month < 0 ? null : isoOf(Number(m[3]), month + 1, Number(m[1]));
  }
  return null;
}

/** `2026-11-23` → `23/11/2026`, as bank forms take dates. */
export function toItalianDate(iso: string): string {
  const [y, m, d] = iso.split('-');
  return `${d}/${m}/${y}`;
}

export const PERIOD_PRESETS = [
  'last_7_days',
  'last_30_days',
  'last_90_days',
  'this_month',
  'last_month',
  'this_year',
] as const;
export type PeriodPreset = (typeof PERIOD_PRESETS)[number];

/** A period of statement lines, both ends included, as ISO dates. */
export interface Period {
  from: string;
  to: string;
  preset: PeriodPreset | null;
}

/** The local calendar day of `now`, ISO. */
export function todayIso(now: Date = new Date()): string {
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** The year, month and day of an ISO date (`2026-10-01`). */
export function isoParts(iso: string): { y: number; m: number; d: number } {
  return { y: Number(iso.slice(0, 4)), m: Number(iso.slice(5, 7)), d: Number(iso.slice(8, 10)) };
}

function addDays(iso: string, days: number): string {
  const { y, m, d } = isoParts(iso);
  const t = new Date(Date.UTC(y, m - 1, d + days));
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
}

function presetPeriod(preset: PeriodPreset, today: string): Period {
  const { y, m } = isoParts(today);
  const monthStart = `${y}-${pad(m)}-01`;
  switch (preset) {
    case 'last_7_days':
      return { from: addDays(today, -6), to: today, preset };
    case 'last_30_days':
      return { from: addDays(today, -29), to: today, preset };
    case 'last_90_days':
      return { from: addDays(today, -89), to: today, preset };
    case 'this_month':
      return { from: monthStart, to: today, preset };
    case 'last_month': {
      const end = addDays(monthStart, -1);
      return { from: `${end.slice(0, 8)}01`, to: end, preset };
    }
    case 'this_year':
      return { from: `${y}-01-01`, to: today, preset };
  }
}

const isPreset = (name: string): name is PeriodPreset => PERIOD_PRESETS.some((p) => p === name);

/**
 * The period a call asks for: a preset counted back from `today`, or explicit `from` and `to`
 * (Italian or ISO dates). A string says what is wrong with the input.
 */
export function resolvePeriod(
  input: { preset?: string; from?: string; to?: string },
  today: string,
): Period | string {
  const { preset, from, to } = input;
  if (from || to) {
    if (!from || !to) return 'from and to go together: give both dates, or a preset';
    if (preset && preset !== 'custom')
      return `preset ${preset} and from/to disagree: give either a preset or both dates`;
    const f = parseDate(from);
    const t = parseDate(to);
    if (!f) return `from must be a date as 01/10/2026 or 2026-10-01, got ${from}`;
    if (!t) return `to must be a date as 01/10/2026 or 2026-10-01, got ${to}`;
    if (f > t) return `from (${f}) is after to (${t})`;
    if (t > today) return `to (${t}) is after today (${today})`;
    return { from: f, to: t, preset: null };
  }
  const chosen = preset ?? 'last_30_days';
  if (chosen === 'custom') return 'preset custom needs from and to';
  if (!isPreset(chosen))
    return `preset must be one of ${PERIOD_PRESETS.join(', ')} or custom, got ${chosen}`;
  return presetPeriod(chosen, today);
}

/** One line of a statement as the bank plugins answer it. */
export interface Movement {
  /** ISO: the booking date. */
  date: string;
  value_date: string | null;
  description: string;
  /** Signed: money in positive, money out negative. */
  amount: number;
  currency: string | null;
  /** The balance after the line, where the site shows one. */
  balance: number | null;
}

/** Money in and out of a list of signed amounts, to the cent. */
export interface Totals {
  income: number;
  /** Negative, or 0. */
  outflow: number;
  net: number;
}

const cents = (n: number): number => Math.round(n * 100) / 100;

export function totalsOf(amounts: number[]): Totals {
  let inCents = 0;
  let outCents = 0;
  for (const a of amounts) {
    const c = Math.round(a * 100);
    if (c > 0) inCents += c;
    else outCents += c;
  }
  return {
    income: cents(inCents / 100),
    outflow: cents(outCents / 100),
    net: cents((inCents + outCents) / 100),
  };
}
