import type { CDPSession, Page } from 'puppeteer-core';
import type { ProxyIdentity } from '@persona-browser/contracts';
import { onPageSessionSwap, pageSession } from '../devtools/page-session';
import { identityGeolocation } from './apply';

/** A pool page as identity sees it: the puppeteer page (a ManagedPage is one). */
export interface PageHolder {
  readonly page: Page;
}

/**
 * What the command line cannot give a page, set on each pool page as it is made:
 *
 * - the identity's position for `navigator.geolocation`, with the permission granted so that
 *   no prompt appears;
 * - the identity's locale as the default of `Intl`. This Chromium ships the en-US resources
 *   only, so LANG and `--lang` leave `Intl.DateTimeFormat().resolvedOptions().locale` at en-US
 *   in pages and workers alike (measured, Chromium 156). `Emulation.setLocaleOverride` on the
 *   page's target reaches the page and its dedicated workers (measured, same build).
 *
 * The time zone needs nothing here: TZ in the browser's environment reaches pages and dedicated
 * workers (measured: both report the identity's zone and offset). A prerendered page that is
 * activated moves to a new target: the overrides follow it there.
 */
export async function applyIdentityToPage(p: PageHolder, identity: ProxyIdentity): Promise<void> {
  // On the browser's own connection: a grant made through a DevTools session is withdrawn when
  // that session detaches. No origin: every site may ask, as a person who allowed it would.
  await p.page
    .browser()
    .defaultBrowserContext()
    .setPermission('*', { permission: { name: 'geolocation' }, state: 'granted' });
  await applyToPage(p, pageOverrides(identity, null));
}

/**
 * The locale as the default of `Intl` in the page and its dedicated workers (the command line
 * cannot give it: see above), for a persona that sets `BROWSER_LOCALE` or wears an identity.
 */
export function applyLocaleToPage(p: PageHolder, locale: string): Promise<void> {
  return applyToPage(p, pageOverrides(null, locale));
}

/** One DevTools command for a page's session. */
export interface SessionCommand {
  method: 'Emulation.setGeolocationOverride' | 'Emulation.setLocaleOverride';
  params: Record<string, unknown>;
}

/**
 * The commands that make a page's session tell the identity's position and locale, or the
 * persona's locale (BROWSER_LOCALE) without one: what a pool page gets, and what the page of an
 * outside DevTools client is given before it runs.
 */
export function pageOverrides(
  identity: ProxyIdentity | null,
  locale: string | null,
): SessionCommand[] {
  const commands: SessionCommand[] = [];
  if (identity) {
    const position = identityGeolocation(identity);
    commands.push({ method: 'Emulation.setGeolocationOverride', params: { ...position } });
  }
  const tells = identity?.locale ?? locale;
  if (tells) commands.push({ method: 'Emulation.setLocaleOverride', params: { locale: tells } });
  return commands;
}

async function applyToPage(p: PageHolder, commands: SessionCommand[]): Promise<void> {
  await onEverySession(p, async (session) => {
    for (const c of commands) await session.send(c.method, c.params);
  });
}

/** Runs `apply` on the page's session now and on every session it moves to later. */
async function onEverySession(
  p: PageHolder,
  apply: (session: CDPSession) => Promise<void>,
): Promise<void> {
  await apply(pageSession(p.page));
  onPageSessionSwap(p.page, (session) => void apply(session).catch(() => undefined));
}
