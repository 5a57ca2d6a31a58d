import type { PluginContext } from '@persona-browser/plugin-sdk';
import type { PeriodPreset } from '../italian';

/**
 * Bank B's home banking as the bank-b plugins know it: where it is, and every selector, text
 * mark and address they rely on. A change of the site's markup is one edit here.
 */

/** Selectors of the site's pages, read in the isolated world or aimed at by gestures. */
export const SELECTORS = {
  /** The login page: the form is rendered at once, its button enabled once the script runs. */
  loginForm: '#form-accesso',
  alias: '#form-accesso input[name="alias"]',
  password: '#form-accesso input[type="password"]',
  loginButton: '#form-accesso button[type="submit"]',
  /** A notice over the login form ("Sessione scaduta…") or a form's own error line. */
  notice: '[role="alert"]:not([hidden])',
  /** The second factor: the code the site sent by SMS. */
  otpForm: '#form-otp',
  otpInput: '#form-otp input[name="otp"]',
  otpSentTo: '.sms',
  /** The logged-in area: its main menu and the accounts entry in it. */
  menu: 'nav[aria-label="Menu principale"]',
  menuAccounts: 'nav[aria-label="Menu principale"] a[href$="/conti"]',
  heading: 'main h1',
  /** "I miei conti": one tab per account, the selected one marked. */
  accountTab: '.elenco-conti [role="tab"]',
  accountLabel: '.tipo',
  accountNumber: '.numero',
  /** The period filter: two dd/mm/yyyy fields, quick links and "Applica". */
  periodForm: '#filtro-periodo',
  from: '#filtro-periodo input[name="dal"]',
  to: '#filtro-periodo input[name="al"]',
  quickLink: '#filtro-periodo a.rapido',
  apply: '#filtro-periodo button[type="submit"]',
  periodError: '#filtro-periodo .errore',
  /** "Movimenti dal 01/10/2026 al 31/10/2026" and "Importi in EUR". */
  periodShown: '.periodo-mostrato',
  currency: '.valuta',
  /** The movements: a header row naming the columns, 15 rows a page. */
  headerCell: 'table.movimenti thead th',
  row: 'table.movimenti tbody tr',
  /** Numbered page links, each a new document (`/conti?pagina=2`); the current one marked. */
  pageLink: 'nav.paginazione a',
} as const;

/** Text marks (regular expression sources, matched case-insensitively) and paths. */
export const PATTERNS = {
  loginPath: '/accesso',
  sessionExpired: 'sessione scaduta',
  /** The masked number in the SMS line ("… al numero +39 *** *** 4821."). */
  maskedPhone: '\\+?\\d[\\d* ]*\\d',
  accountsHeading: '^i miei conti$',
  /** The period line: group 1 and 2 are the two dates. */
  periodLine: 'dal\\s+(\\d{1,2}/\\d{1,2}/\\d{4})\\s+al\\s+(\\d{1,2}/\\d{1,2}/\\d{4})',
  /** A page link's number in its address. */
  pageParam: '[?&]pagina=(\\d+)',
} as const;

/** Column headers of the movements table, each matched by its start (lower case). */
export const COLUMNS = {
  date: 'data operazione',
  value_date: 'data valuta',
  description: 'descrizione',
  debit: 'addebiti',
  credit: 'accrediti',
  balance: 'saldo',
} as const;

/**
 * The site's quick links that mean exactly a preset (checked anyway: the fields must then hold
 * the preset's dates, else the plugin types them). "Ultimo mese" and "Ultimi 3 mesi" count
 * calendar months, not the presets' 30 and 90 days, so they are not here.
 */
export const QUICK_LINKS: Partial<Record<PeriodPreset, string>> = {
  last_7_days: 'Ultimi 7 giorni',
  this_year: 'Anno in corso',
};

/** The site shows at most this many months of movements at a time. */
export const MAX_MONTHS = 12;

/** The site's address without a trailing slash. */
export function baseUrl(ctx: PluginContext): string {
  return (ctx.setting('BANK_B_BASE_URL') ?? 'https://www.bancab.it').replace(/\/+$/, '');
}

/** Whether `url` is on the site (same origin as the base URL). */
export function isOnSite(ctx: PluginContext, url: string): boolean {
  try {
    return new URL(url).origin === new URL(baseUrl(ctx)).origin;
  } catch {
    return false;
  }
}

/** The family's plugin names, for hints. */
export const PLUGIN = (name: string): string => `bank/bank-b/${name}`;
