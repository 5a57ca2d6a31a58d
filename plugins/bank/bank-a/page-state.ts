import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, pollUntil } from '@persona-browser/plugin-sdk';
import { parseDate } from '../italian';
import type { Section } from './site';
import { PATHS, PATTERNS, SELECTORS, isOnSite } from './site';

export type BankAState =
  | 'login'
  | 'login_hydrated'
  | 'app_confirmation'
  | 'logged_in'
  | 'logged_in_home'
  | 'logged_in_conto'
  | 'logged_in_carta'
  | 'unknown';

export const LOGGED_IN: readonly BankAState[] = [
  'logged_in',
  'logged_in_home',
  'logged_in_conto',
  'logged_in_carta',
];
export const WITH_MOVEMENTS: readonly BankAState[] = ['logged_in_conto', 'logged_in_carta'];

/** The movements list of the account or card page, as the page shows it now. */
export interface ListView {
  /** A page of the list is loading (XHR in flight). */
  busy: boolean;
  /** The shown period's text ("Movimenti dal 01/10/2026 al 30/10/2026"). */
  shownText: string;
  page: number | null;
  pages: number | null;
  hasNext: boolean;
  hasPrevious: boolean;
  /** Column headings, lower case. */
  headers: string[];
  /** The cells' text of each movement row (an "empty list" row is left out). */
  rows: string[][];
  /** The period selector: the chosen option's value and label, every option's label. */
  select: { value: string; label: string; options: string[] } | null;
  /** The custom dates (from, to, search) are on screen. */
  customOpen: boolean;
  filterError: string | null;
}

/** Everything the plugins decide on, read from the live page in one isolated-world call. */
export interface BankAPage {
  url: string;
  path: string;
  title: string;
  /** The page is on the site of BANK_A_BASE_URL (decided in Node, not in the page). */
  onSite: boolean;
  login: { hydrated: boolean; notice: string | null; error: string | null } | null;
  confirmation: { qrLoaded: boolean } | null;
  loggedIn: boolean;
  hasMenu: boolean;
  hasLogo: boolean;
  section: Section | null;
  product: { label: string | null; number: string | null; balance: string | null } | null;
  list: ListView | null;
}

type Marks = typeof SELECTORS & typeof PATTERNS & { sections: Array<[Section, string]> };
type InPage = Omit<BankAPage, 'onSite'>;

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function inspectInPage(m: Marks): InPage {
  const one = (sel: string): Element | null => document.querySelector(sel);
  // innerText is what a person sees; an element that is not HTML (an SVG) has textContent only.
  const text = (e: Element | null): string =>
    ((e instanceof HTMLElement ? e.innerText : e?.textContent) ?? '').replace(/\s+/g, ' ').trim();
  const orNull = (s: string): string | null => (s === '' ? null : s);
  const shown = (e: Element | null): boolean => !!e && e.getClientRects().length > 0;
  /** The first match when it is an element of `type` (a button, an image), else null. */
  const oneOf = <T extends Element>(sel: string, type: new () => T): T | null => {
    const e = one(sel);
    return e instanceof type ? e : null;
  };
  const path = location.pathname;

  const form = one(m.loginForm);
  const button = oneOf(m.loginButton, HTMLButtonElement);
  const login = form
    ? {
        hydrated: !!button && !button.disabled,
        notice: orNull(text(one(m.loginNotice))),
        error: orNull(text(one(m.loginError))),
      }
    : null;

  const qr = oneOf(m.qrImage, HTMLImageElement);
  const confirmation = one(m.confirmation)
    ? { qrLoaded: !!qr && qr.complete && qr.naturalWidth > 0 }
    : null;

  const loggedIn = one(m.logout) !== null;
  let section: Section | null = null;
  for (const [name, re] of m.sections) {
    if (new RegExp(re).test(path)) section = name;
  }

  const name = one(m.productName);
  const product = name
    ? {
        label: orNull(text(name)),
        number: orNull(text(one(m.productNumber))),
        balance: orNull(text(one(m.productBalance))),
      }
    : null;

  let list: ListView | null = null;
  const table = one(m.table);
  if (table) {
    const headers = Array.from(table.querySelectorAll('thead th')).map((th) =>
      text(th).toLowerCase(),
    );
    const rows = Array.from(table.querySelectorAll('tbody tr'))
      .map((tr) => Array.from(tr.querySelectorAll('td')))
      .filter((cells) => cells.length > 0 && !cells.some((td) => td.colSpan > 1))
      .map((cells) => cells.map((td) => text(td)));
    const pageOf = new RegExp(m.pageOf, 'i').exec(text(one(m.pageIndicator)));
    const next = oneOf(m.nextButton, HTMLButtonElement);
    const previous = oneOf(m.previousButton, HTMLButtonElement);
    const sel = oneOf(m.periodSelect, HTMLSelectElement);
    const chosen = sel?.selectedOptions[0] ?? null;
    list = {
      busy: table.getAttribute('aria-busy') === 'true' || one(m.loading) !== null,
      shownText: text(one(m.shownPeriod)),
      page: pageOf ? Number(pageOf[1]) : null,
      pages: pageOf ? Number(pageOf[2]) : null,
      hasNext: !!next && !next.disabled && shown(next),
      hasPrevious: !!previous && !previous.disabled && shown(previous),
      headers,
      rows,
      select: sel
        ? {
            value: sel.value,
            label: text(chosen),
            options: Array.from(sel.options).map((o) => text(o)),
          }
        : null,
      customOpen: shown(one(m.customDates)),
      filterError: orNull(text(one(m.filterError))),
    };
  }

  return {
    url: location.href,
    path,
    title: document.title,
    login,
    confirmation,
    loggedIn,
    hasMenu: one(m.menu) !== null,
    hasLogo: one(m.logo) !== null,
    section: loggedIn ? section : null,
    product,
    list,
  };
}

/** Each section with the pattern of its paths, for the page to test its own path against. */
const sectionPaths = Object.keys(PATHS.sections)
  .filter((name): name is Section => name in PATHS.sections)
  .map((name): [Section, string] => [name, PATHS.sections[name]]);

/**
 * Reads the page. A read that meets a document being replaced (a link that loads a new page)
 * is tried again once the new document has a body.
 */
export async function readPage(ctx: PluginContext): Promise<BankAPage> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const raw = await ctx.page.evaluate(inspectInPage, {
        ...SELECTORS,
        ...PATTERNS,
        sections: sectionPaths,
      });
      return { ...raw, onSite: isOnSite(ctx, raw.url) };
    } catch (err) {
      if (attempt >= 3 || ctx.signal.aborted) throw err;
      await ctx.sleep(300);
      await ctx.page.waitForAny({ body: 'body' }, 5_000);
    }
  }
}

/** The state the bank-a plugins chain on, from what the page shows. */
export function stateOf(p: BankAPage): BankAState {
  if (!p.onSite) return 'unknown';
  if (p.login) return p.login.hydrated ? 'login_hydrated' : 'login';
  if (p.confirmation) return 'app_confirmation';
  if (p.loggedIn) return p.section ? `logged_in_${p.section}` : 'logged_in';
  return 'unknown';
}

/** The login page says the session expired. */
export const sessionExpired = (p: BankAPage): boolean =>
  !!p.login?.notice && new RegExp(PATTERNS.sessionExpired, 'i').test(p.login.notice);

/** The dates of the shown period ("dal 01/10/2026 al 30/10/2026"), ISO; null when unreadable. */
export function shownPeriod(list: ListView): { from: string; to: string } | null {
  const dates = (list.shownText.match(new RegExp(PATTERNS.date, 'g')) ?? []).map(parseDate);
  const [from, to] = dates;
  return from && to ? { from, to } : null;
}

const P = 'bank/bank-a/';

/** What to do next from each state: a sentence naming the plugin, and the route suffixes. */
const GUIDE: Record<BankAState, { hint: string; next: string[] }> = {
  unknown: {
    hint: `Not on a page of the bank-a site the plugins know: open the login page with ${P}init-login`,
    next: ['init-login'],
  },
  login: {
    hint: `The login page: log in with ${P}hydrate-login (it waits until the form is ready)`,
    next: ['hydrate-login', 'init-login'],
  },
  login_hydrated: {
    hint: `The login form is ready: log in with ${P}hydrate-login`,
    next: ['hydrate-login', 'init-login'],
  },
  app_confirmation: {
    hint:
      `The bank waits for the login to be confirmed on the phone app: show the QR code with ` +
      `${P}read-qr, then wait for the confirmation with ${P}vai-a-home`,
    next: ['read-qr', 'vai-a-home'],
  },
  logged_in: {
    hint: `Logged in, outside the sections: go to the home with ${P}vai-a-home, or open ${P}vai-a-conto or ${P}vai-a-carta`,
    next: ['vai-a-home', 'vai-a-conto', 'vai-a-carta'],
  },
  logged_in_home: {
    hint: `The home: open the current account with ${P}vai-a-conto or the card with ${P}vai-a-carta`,
    next: ['vai-a-conto', 'vai-a-carta'],
  },
  logged_in_conto: {
    hint: `The current account: choose the period with ${P}seleziona-periodo, read the movements with ${P}leggi-movimenti`,
    next: ['leggi-movimenti', 'seleziona-periodo', 'vai-a-carta', 'vai-a-home'],
  },
  logged_in_carta: {
    hint: `The card: choose the period with ${P}seleziona-periodo, read the movements with ${P}leggi-movimenti`,
    next: ['leggi-movimenti', 'seleziona-periodo', 'vai-a-conto', 'vai-a-home'],
  },
};

const EXPIRED = {
  hint: `The session expired: log in again with ${P}hydrate-login`,
  next: ['hydrate-login', 'init-login'],
};

/** What a client acts on: the state, the next move, whether the session just expired. */
export interface Guide {
  state: BankAState;
  hint: string;
  next: string[];
  session_expired: boolean;
}

export function guide(p: BankAPage): Guide {
  const state = stateOf(p);
  const expired = sessionExpired(p);
  const g = expired ? EXPIRED : GUIDE[state];
  return { state, hint: g.hint, next: [...g.next], session_expired: expired };
}

/** The page in a few words, for "found …" in a SiteError. */
export function describePage(p: BankAPage): string {
  const state = stateOf(p);
  if (!p.onSite) return `a page outside the bank-a site (${p.url})`;
  if (state === 'unknown')
    return `a page of the site the plugins do not know ("${p.title}" at ${p.url})`;
  if (sessionExpired(p)) return `the login page at ${p.url}: the session expired`;
  return `state ${state} at ${p.url}`;
}

/** "found …" of a SiteError: the page, then the way on. */
export function foundThen(p: BankAPage, hint: string): string {
  return `${describePage(p)}; ${hint.charAt(0).toLowerCase()}${hint.slice(1)}`;
}

/**
 * Refuses a call made in the wrong state: `success: false` with the state found, and a hint
 * and next routes that lead towards a state the plugin needs.
 */
export function requireState(
  p: BankAPage,
  needed: readonly BankAState[],
  expected = `state ${needed.join(' or ')}`,
): BankAState {
  const found = stateOf(p);
  if (needed.includes(found)) return found;
  const g = guide(p);
  const wantsSection = needed.every((s) => WITH_MOVEMENTS.includes(s));
  if (wantsSection && LOGGED_IN.includes(found)) {
    g.hint = `Open the current account with ${P}vai-a-conto or the card with ${P}vai-a-carta first`;
    g.next = ['vai-a-conto', 'vai-a-carta'];
  }
  throw new SiteError(expected, foundThen(p, g.hint), { ...g });
}

/** Reads the page until `done` holds, up to `timeoutMs`; answers the last read either way. */
export const readUntil = (
  ctx: PluginContext,
  done: (p: BankAPage) => boolean,
  timeoutMs: number,
  pollMs = 200,
): Promise<BankAPage> => pollUntil(ctx, () => readPage(ctx), done, timeoutMs, pollMs);

/** The fields every answer of a state-changing plugin carries. */
export function landing(p: BankAPage): Guide & { page_url: string } {
  return { ...guide(p), page_url: p.url };
}
