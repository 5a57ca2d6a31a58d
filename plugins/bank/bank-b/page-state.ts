import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, pollUntil } from '@persona-browser/plugin-sdk';
import { PATTERNS, PLUGIN, SELECTORS, isOnSite } from './site';

export type BankBState =
  'login' | 'login_hydrated' | '2fa_pending' | 'logged_in' | 'logged_in_conti' | 'unknown';

/** One account tab of "I miei conti". */
export interface AccountTab {
  label: string;
  number_masked: string;
  selected: boolean;
}

/** A numbered page link of the movements; `selector` aims at exactly that link. */
export interface PageLink {
  n: number;
  selector: string;
  current: boolean;
}

/** Everything the plugins decide on, read from the live page in one isolated-world call. */
export interface BankBPage {
  url: string;
  title: string;
  /** The page is on the site of BANK_B_BASE_URL (set in Node after the read). */
  onSite: boolean;
  /** The login form; `hydrated` once its button is enabled (the script has run). */
  login: { hydrated: boolean } | null;
  /** The first visible notice or error line ("Sessione scaduta…", "Codice errato…"). */
  notice: string | null;
  /** The one-time code form, and the masked number the SMS went to. */
  otp: { sentTo: string | null } | null;
  /** The logged-in area's main menu is on the page. */
  menu: boolean;
  heading: string | null;
  /** "I miei conti": accounts, period, the movements table of this page, its page links. */
  conti: {
    accounts: AccountTab[];
    periodText: string | null;
    fromValue: string | null;
    toValue: string | null;
    currencyText: string | null;
    error: string | null;
    columns: string[];
    rows: string[][];
    pages: PageLink[];
  } | null;
}

type Marks = typeof SELECTORS & typeof PATTERNS;

/* Runs in the page's isolated world: it may use only its argument and the DOM. */
function inspectInPage(m: Marks): Omit<BankBPage, 'onSite'> {
  const one = (sel: string, root: ParentNode = document): Element | null => root.querySelector(sel);
  const all = (sel: string, root: ParentNode = document): Element[] =>
    Array.from(root.querySelectorAll(sel));
  // innerText is what a person sees; an element that is not HTML (an SVG) has textContent only.
  const text = (e: Element | null): string =>
    ((e instanceof HTMLElement ? e.innerText : e?.textContent) ?? '').replace(/\s+/g, ' ').trim();
  const value = (sel: string): string | null => {
    const e = one(sel);
    return e && 'value' in e ? String(e.value) : null;
  };

  const loginButton = one(m.loginButton);
  const button = loginButton instanceof HTMLButtonElement ? loginButton : null;
  const login = one(m.loginForm) ? { hydrated: button !== null && !button.disabled } : null;
  const notices = all(m.notice)
    .map(text)
    .filter((t) => t !== '');
  const sms = text(one(m.otpSentTo));
  const otp = one(m.otpForm) ? { sentTo: new RegExp(m.maskedPhone).exec(sms)?.[0] ?? null } : null;
  const heading = text(one(m.heading)) || null;

  let conti: Omit<BankBPage, 'onSite'>['conti'] = null;
  if (new RegExp(m.accountsHeading, 'i').test(heading ?? '') && one(m.periodForm)) {
    const pages: PageLink[] = [];
    const pageRe = new RegExp(m.pageParam);
    for (const a of all(m.pageLink)) {
      const label = text(a);
      const href = a.getAttribute('href') ?? '';
      if (!/^\d+$/.test(label) || !pageRe.test(href)) continue;
      pages.push({
        n: Number(label),
        selector: `${m.pageLink}[href="${href}"]`,
        current: a.getAttribute('aria-current') === 'page',
      });
    }
    conti = {
      accounts: all(m.accountTab).map((tab) => ({
        label: text(one(m.accountLabel, tab)),
        number_masked: text(one(m.accountNumber, tab)),
        selected: tab.getAttribute('aria-selected') === 'true',
      })),
      periodText: text(one(m.periodShown)) || null,
      fromValue: value(m.from),
      toValue: value(m.to),
      currencyText: text(one(m.currency)) || null,
      error: text(one(m.periodError)) || null,
      columns: all(m.headerCell).map(text),
      rows: all(m.row).map((tr) => all('td', tr).map(text)),
      pages,
    };
  }

  return {
    url: location.href,
    title: document.title,
    login,
    notice: notices[0] ?? null,
    otp,
    menu: one(m.menu) !== null,
    heading,
    conti,
  };
}

/**
 * Reads the page. A read that meets a document being replaced (a link, a redirect) is tried
 * again once the new document has a body.
 */
export async function readPage(ctx: PluginContext): Promise<BankBPage> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const p = await ctx.page.evaluate(inspectInPage, { ...SELECTORS, ...PATTERNS });
      return { ...p, onSite: isOnSite(ctx, p.url) };
    } catch (err) {
      if (attempt >= 3 || ctx.signal.aborted) throw err;
      await ctx.sleep(300);
      await ctx.page.waitForAny({ body: 'body' }, 5_000);
    }
  }
}

export function stateOf(p: BankBPage): BankBState {
  if (!p.onSite) return 'unknown';
  if (p.login) return p.login.hydrated ? 'login_hydrated' : 'login';
  if (p.otp) return '2fa_pending';
  if (p.menu && p.conti) return 'logged_in_conti';
  if (p.menu) return 'logged_in';
  return 'unknown';
}

/** The login page says the last session ended for inactivity. */
export const sessionExpired = (p: BankBPage): boolean =>
  p.login !== null && new RegExp(PATTERNS.sessionExpired, 'i').test(p.notice ?? '');

/** The next plugins from each state, most likely first (route suffixes). */
const NEXT: Record<BankBState, string[]> = {
  unknown: ['init-login'],
  login: ['hydrate-login', 'init-login'],
  login_hydrated: ['hydrate-login', 'init-login'],
  '2fa_pending': ['vai-a-conti', 'read-state'],
  logged_in: ['vai-a-conti'],
  logged_in_conti: ['seleziona-periodo', 'leggi-movimenti', 'vai-a-conti'],
};

export function hintOf(p: BankBPage): string {
  const state = stateOf(p);
  const again = sessionExpired(p)
    ? `The session expired ("${p.notice}"): log in again with ${PLUGIN('hydrate-login')}`
    : null;
  switch (state) {
    case 'unknown':
      return `Not on a page of bank-b's site the plugins know: open the login page with ${PLUGIN('init-login')}`;
    case 'login':
      return (
        again ??
        `The login page is still loading its scripts: ${PLUGIN('hydrate-login')} waits for them, then logs in`
      );
    case 'login_hydrated':
      return again ?? `The login form is ready: log in with ${PLUGIN('hydrate-login')}`;
    case '2fa_pending':
      return (
        'The site sent a one-time code by SMS: the person types it in the live view; ' +
        `${PLUGIN('vai-a-conti')} waits for it (confirmation_wait_s), then opens the accounts`
      );
    case 'logged_in':
      return `Logged in: open "I miei conti" with ${PLUGIN('vai-a-conti')}`;
    case 'logged_in_conti':
      return (
        `On "I miei conti": choose the period with ${PLUGIN('seleziona-periodo')}, then read ` +
        `the movements with ${PLUGIN('leggi-movimenti')}`
      );
  }
}

/** The fields every bank-b answer about the chain carries, success or not. */
export function chainFields(p: BankBPage): {
  state: BankBState;
  hint: string;
  next: string[];
  session_expired: boolean;
  page_url: string;
} {
  const state = stateOf(p);
  return {
    state,
    hint: hintOf(p),
    next: NEXT[state],
    session_expired: sessionExpired(p),
    page_url: p.url,
  };
}

/** The page in a few words, for "found …" in a SiteError. */
export function describePage(p: BankBPage): string {
  const state = stateOf(p);
  if (state === 'unknown') return `a page titled "${p.title}" at ${p.url}`;
  return `state ${state} at ${p.url}${sessionExpired(p) ? ' (the session expired)' : ''}`;
}

/** Refuses a call made in the wrong state: the state found, its hint and next plugins. */
export function requireState(p: BankBPage, ...allowed: BankBState[]): BankBState {
  const found = stateOf(p);
  if (allowed.includes(found)) return found;
  const fields = chainFields(p);
  throw new SiteError(
    `state ${allowed.join(' or ')}`,
    `${describePage(p)}; ${fields.hint}`,
    fields,
  );
}

/** Reads the page until `done` holds, up to `timeoutMs`; answers the last read either way. */
export const readUntil = (
  ctx: PluginContext,
  done: (p: BankBPage) => boolean,
  timeoutMs: number,
  pollMs = 250,
): Promise<BankBPage> => pollUntil(ctx, () => readPage(ctx), done, timeoutMs, pollMs);
