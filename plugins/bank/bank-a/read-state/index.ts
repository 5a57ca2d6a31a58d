import { definePlugin } from '@persona-browser/plugin-sdk';
import { maskNumber } from '../movements';
import type { BankAPage } from '../page-state';
import { guide, readPage, shownPeriod, stateOf } from '../page-state';

/** A type, not an interface: a plugin's result must be a plain record. */
type StateAnswer = Record<string, unknown>;

function message(p: BankAPage): string {
  const state = stateOf(p);
  switch (state) {
    case 'unknown':
      return p.onSite
        ? `A page of the site the plugins do not know: "${p.title}" at ${p.url}`
        : `Not on the bank-a site: ${p.url}`;
    case 'login':
      return p.login?.notice
        ? `The login page, with the notice "${p.login.notice}"; its form is not ready yet`
        : 'The login page; its form is not ready yet (the site is still loading it)';
    case 'login_hydrated':
      return p.login?.notice
        ? `The login page, with the notice "${p.login.notice}"; its form is ready`
        : 'The login page; its form is ready';
    case 'app_confirmation':
      return p.confirmation?.qrLoaded
        ? 'The bank shows a QR code and waits for the login to be confirmed on the phone app'
        : 'The bank waits for the login to be confirmed on the phone app; its QR code is loading';
    case 'logged_in':
      return `Logged in, on a page outside the sections: "${p.title}"`;
    case 'logged_in_home':
      return 'Logged in, on the home';
    default: {
      const what = state === 'logged_in_conto' ? 'current account' : 'card';
      const period = p.list ? shownPeriod(p.list) : null;
      const range = period ? `, movements from ${period.from} to ${period.to}` : '';
      const pages = p.list?.pages ? `, page ${p.list.page} of ${p.list.pages}` : '';
      return `Logged in, on the ${what} page${range}${pages}`;
    }
  }
}

/** What the page shows, in the fields of the state it is in (null where it has none). */
function answer(p: BankAPage): StateAnswer {
  const state = stateOf(p);
  const withList = state === 'logged_in_conto' || state === 'logged_in_carta';
  const number = p.product?.number ?? null;
  return {
    ...guide(p),
    page_url: p.url,
    section: p.section,
    hydrated: p.login ? p.login.hydrated : null,
    login_notice: p.login?.notice ?? null,
    login_error: p.login?.error ?? null,
    qr_shown: p.confirmation ? p.confirmation.qrLoaded : null,
    account:
      withList && p.product?.label
        ? { label: p.product.label, number_masked: number ? maskNumber(number) : null }
        : null,
    period: withList && p.list ? shownPeriod(p.list) : null,
    list_page:
      withList && p.list?.page != null ? { current: p.list.page, total: p.list.pages } : null,
    message: message(p),
  };
}

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    // Observes only: one read of the live page, no navigation, no gesture.
    return answer(await readPage(ctx));
  },
});
