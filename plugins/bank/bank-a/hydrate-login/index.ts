import { clickOnScreen, definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { fillField } from '../../human';
import {
  describePage,
  guide,
  landing,
  readPage,
  readUntil,
  requireState,
  stateOf,
} from '../page-state';
import { CELL_SECRET, CODE_SECRET, SELECTORS } from '../site';

/** The site's script makes the form usable late; what is typed before is thrown away. */
const HYDRATION_WAIT_MS = 20_000;
/** After the click the site checks the credentials and loads the confirmation page. */
const SUBMIT_WAIT_MS = 20_000;

const SAID: Record<string, string> = {
  app_confirmation:
    'Credentials accepted: the bank waits for the login to be confirmed on the phone app (read the QR code with bank/bank-a/read-qr)',
};

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    const cell = ctx.secret(CELL_SECRET);
    const code = ctx.secret(CODE_SECRET);
    if (!cell || !code) {
      const missing = [cell ? null : CELL_SECRET, code ? null : CODE_SECRET].filter(
        (name) => name !== null,
      );
      const verb = missing.length > 1 ? 'are' : 'is';
      return {
        success: false,
        error: `${missing.join(' and ')} ${verb} not set in the worker's environment`,
        missing,
      };
    }

    requireState(await readPage(ctx), ['login', 'login_hydrated']);
    let page = await readUntil(ctx, (p) => stateOf(p) !== 'login', HYDRATION_WAIT_MS);
    requireState(page, ['login_hydrated'], 'the login form ready for input');

    await fillField(ctx, SELECTORS.cellInput, cell, 'the mobile number field');
    await fillField(ctx, SELECTORS.codeInput, code, 'the access code field');
    await ctx.page.navigationAfter(
      () => clickOnScreen(ctx, SELECTORS.loginButton, 'the Accedi button'),
      SUBMIT_WAIT_MS,
    );
    page = await readUntil(ctx, (p) => !p.login || !!p.login.error, SUBMIT_WAIT_MS);
    if (page.login?.error) {
      return {
        success: false,
        error: 'login_rejected',
        ...landing(page),
        message: `The bank refused the credentials: "${page.login.error}"`,
      };
    }
    const state = stateOf(page);
    if (state === 'unknown' || state === 'login') {
      throw new SiteError('the page after the login', describePage(page), { ...guide(page) });
    }
    return {
      ...landing(page),
      message: SAID[state] ?? `Logged in: state ${state}`,
    };
  },
});
