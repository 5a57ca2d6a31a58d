import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { clickToPage } from '../human';
import { selectedAccount } from '../movements';
import type { BankBPage } from '../page-state';
import {
  chainFields,
  describePage,
  readPage,
  readUntil,
  requireState,
  stateOf,
} from '../page-state';
import { SELECTORS } from '../site';

interface Params {
  confirmation_wait_s: number;
}

/** How often the page is read while the person types the code. */
const POLL_MS = 500;
/** The accounts page loads after the click. */
const ACCOUNTS_WAIT_MS = 15_000;

const loggedIn = (p: BankBPage): boolean => {
  const s = stateOf(p);
  return s === 'logged_in' || s === 'logged_in_conti';
};

export default definePlugin<Params>({
  async run(ctx, params) {
    let page = await readPage(ctx);
    const from_state = requireState(page, '2fa_pending', 'logged_in', 'logged_in_conti');
    const steps: string[] = [];
    let waited_s = 0;

    if (from_state === '2fa_pending') {
      // The code went by SMS to the person, who takes control in the live view and types it:
      // the plugin never sees it, it only watches the page leave the code form.
      const started = Date.now();
      page = await ctx.waitingForPerson('the code sent by SMS, typed in the live view', () =>
        readUntil(
          ctx,
          (p) => stateOf(p) !== '2fa_pending',
          params.confirmation_wait_s * 1000,
          POLL_MS,
        ),
      );
      waited_s = Math.round((Date.now() - started) / 100) / 10;
      if (stateOf(page) === '2fa_pending') {
        return {
          success: false,
          error: '2fa_timeout',
          ...chainFields(page),
          waited_s,
          notice: page.notice,
          message: `Nobody entered the code sent by SMS within ${params.confirmation_wait_s} s`,
        };
      }
      // The code page shows "Accesso in corso" and then loads the home page.
      if (!loggedIn(page)) page = await readUntil(ctx, loggedIn, ACCOUNTS_WAIT_MS);
      requireState(page, 'logged_in', 'logged_in_conti');
      steps.push(`waited ${waited_s} s for the code sent by SMS`);
    }

    await clickToPage(ctx, SELECTORS.menuAccounts, '"I miei conti" in the main menu');
    steps.push('clicked "I miei conti" in the main menu');
    page = await readUntil(ctx, (p) => stateOf(p) !== 'logged_in', ACCOUNTS_WAIT_MS);
    if (stateOf(page) !== 'logged_in_conti') {
      throw new SiteError(
        'the accounts page "I miei conti"',
        describePage(page),
        chainFields(page),
      );
    }
    const conti = page.conti!;
    const account = selectedAccount(conti);
    return {
      from_state,
      ...chainFields(page),
      waited_s,
      steps,
      account,
      accounts: conti.accounts,
      message: `${steps.join(', then ')}: "I miei conti"${account ? ` shows ${account.label}` : ''}`,
    };
  },
});
