import type { PluginContext } from '@persona-browser/plugin-sdk';

/**
 * bank-a's online banking as its plugins know it: where it is, and every path, selector and
 * text mark they rely on. A change of the site's markup is one edit here.
 */

export const BASE_URL_SETTING = 'BANK_A_BASE_URL';
const DEFAULT_BASE_URL = 'https://www.bank-a.it';

/** The family's credentials (family.json `secrets`). */
export const CELL_SECRET = 'BANK_A_CELL';
export const CODE_SECRET = 'BANK_A_CODE';

/** The site's addresses: the login page, and the path of each section of the logged-in area. */
export const PATHS = {
  login: '/accesso',
  sections: { home: '^/home', conto: '^/conto', carta: '^/carta' },
} as const;

export type Section = keyof typeof PATHS.sections;

/** Selectors of the site's pages, read in the isolated world or aimed at by gestures. */
export const SELECTORS = {
  /** The login form: its fields, its button (disabled until the page's script hydrated it). */
  loginForm: 'form#form-accesso',
  cellInput: 'form#form-accesso input[name="cellulare"]',
  codeInput: 'form#form-accesso input[name="codice"]',
  loginButton: 'form#form-accesso button[type="submit"]',
  /** A notice above the form (the session expired, logged out) and the form's own error. */
  loginNotice: '.avviso-accesso',
  loginError: '.errore-accesso:not([hidden])',
  /** The confirmation page: the QR code to frame with the phone app. */
  confirmation: '#conferma-app',
  qrBox: '#qr-code',
  qrImage: '#qr-code img',
  /** The logged-in area: the header's logout link and logo, the main menu. */
  logout: 'header a.esci, header a[href$="/esci"]',
  logo: 'header a.logo',
  menu: 'nav#menu-principale',
  menuLink: {
    home: 'nav#menu-principale a[href$="/home"]',
    conto: 'nav#menu-principale a[href$="/conto"]',
    carta: 'nav#menu-principale a[href$="/carta"]',
  },
  /** A product's header on the account and card pages. */
  productName: '.intestazione .nome-prodotto',
  productNumber: '.intestazione .numero-prodotto',
  productBalance: '.intestazione .saldo-valore',
  /** The movements list: period selector, custom dates, shown period, table, pages. */
  periodSelect: 'select#periodo',
  customDates: '#filtro-date',
  fromInput: '#filtro-date input#data-dal',
  toInput: '#filtro-date input#data-al',
  searchButton: '#filtro-date button.cerca',
  filterError: '.errore-filtro:not([hidden])',
  shownPeriod: '.periodo-mostrato',
  table: 'table.movimenti',
  loading: '.caricamento:not([hidden])',
  pageIndicator: '.paginazione .pagina-corrente',
  nextButton: '.paginazione button.successiva',
  previousButton: '.paginazione button.precedente',
} as const;

/** Text marks (regular expression sources, case-insensitive). */
export const PATTERNS = {
  sessionExpired: 'sessione\\s+scaduta',
  /** "Pagina 2 di 4": groups 1 and 2. */
  pageOf: '(\\d+)\\s*di\\s*(\\d+)',
  /** A date as the site writes it, for the shown period ("dal 01/10/2026 al 30/10/2026"). */
  date: '\\d{1,2}[/.-]\\d{1,2}[/.-]\\d{2,4}',
} as const;

/** Column headings of the movements table (lower case, matched from the start). */
export const COLUMNS = {
  date: ['data contabile', 'data operazione', 'data'],
  valueDate: ['data valuta', 'valuta'],
  description: ['descrizione', 'causale'],
  amount: ['importo'],
  balance: ['saldo'],
} as const;

/** The period selector's label for each preset of the shared parameters. */
export const PRESET_LABELS: Record<string, string> = {
  last_7_days: 'Ultimi 7 giorni',
  last_30_days: 'Ultimi 30 giorni',
  last_90_days: 'Ultimi 90 giorni',
  this_month: 'Mese corrente',
  last_month: 'Mese precedente',
  this_year: 'Anno corrente',
};
export const CUSTOM_LABEL = 'Personalizzato';

/** The site's address without a trailing slash. */
export function baseUrl(ctx: PluginContext): string {
  return (ctx.setting(BASE_URL_SETTING) ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}

/** Whether `url` is on the site (same origin as the base URL). */
export function isOnSite(ctx: PluginContext, url: string): boolean {
  try {
    return new URL(url).origin === new URL(baseUrl(ctx)).origin;
  } catch {
    return false;
  }
}
