import { definePlugin } from '@persona-browser/plugin-sdk';
import { selectedAccount, shownPeriod } from '../movements';
import type { BankBPage } from '../page-state';
import { chainFields, readPage, stateOf } from '../page-state';

/** The page of the movements on screen and how many there are. */
function pageOf(p: BankBPage): { current: number; total: number } | null {
  if (!p.conti) return null;
  const pages = p.conti.pages;
  return {
    current: pages.find((l) => l.current)?.n ?? 1,
    total: Math.max(1, ...pages.map((l) => l.n)),
  };
}

function messageOf(p: BankBPage): string {
  switch (stateOf(p)) {
    case 'unknown':
      return `Not on bank-b's site, or on a page of it the plugins do not know (${p.url})`;
    case 'login':
      return 'The login page, its scripts still loading';
    case 'login_hydrated':
      return 'The login page, its form ready';
    case '2fa_pending':
      return `Waiting for the code sent by SMS${p.otp?.sentTo ? `: ${p.otp.sentTo}` : ''}`;
    case 'logged_in':
      return `Logged in, on "${p.heading ?? p.title}"`;
    case 'logged_in_conti': {
      const account = p.conti ? selectedAccount(p.conti) : null;
      return `"I miei conti"${account ? `, ${account.label} ${account.number_masked}` : ''}`;
    }
  }
}

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    // Observes only: one read of the live page, no navigation, no gesture.
    const p = await readPage(ctx);
    return {
      ...chainFields(p),
      section: p.menu ? p.heading : null,
      notice: p.notice,
      otp_sent_to: p.otp?.sentTo ?? null,
      account: p.conti ? selectedAccount(p.conti) : null,
      period: p.conti ? shownPeriod(p.conti) : null,
      page: pageOf(p),
      message: messageOf(p),
    };
  },
});
