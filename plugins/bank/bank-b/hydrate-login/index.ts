import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { fillField } from '../../human';
import { chainFields, readPage, readUntil, requireState, stateOf } from '../page-state';
import { SELECTORS } from '../site';

/** How long the login page's scripts may take to make the form usable. */
const HYDRATION_WAIT_MS = 20_000;
/** After the submit: the auth API answers, then the site loads the code page or an error. */
const AFTER_SUBMIT_MS = 20_000;
/** People press Enter in the password field about as often as they click the button. */
const ENTER_PROBABILITY = 0.5;

const CREDENTIALS = ['BANK_B_ALIAS', 'BANK_B_PWD'] as const;

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    const [alias, password] = CREDENTIALS.map((name) => ctx.secret(name));
    const missing = CREDENTIALS.filter((name) => !ctx.secret(name));
    if (!alias || !password) {
      return {
        success: false,
        error: `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set in the worker's environment`,
        missing,
      };
    }

    requireState(await readPage(ctx), 'login', 'login_hydrated');
    // The form is there at once, but what is typed before the scripts run is thrown away.
    const ready = await readUntil(ctx, (p) => stateOf(p) !== 'login', HYDRATION_WAIT_MS);
    if (stateOf(ready) === 'login') {
      throw new SiteError(
        'the login form ready for input',
        `its scripts still loading after ${HYDRATION_WAIT_MS / 1000} s at ${ready.url}`,
        chainFields(ready),
      );
    }
    requireState(ready, 'login_hydrated');

    await fillField(ctx, SELECTORS.alias, alias, 'the alias field');
    await fillField(ctx, SELECTORS.password, password, 'the password field');
    const byEnter = ctx.chance(ENTER_PROBABILITY);
    const nav = await ctx.page.navigationAfter(
      () =>
        byEnter
          ? ctx.gestures.pressEnter()
          : clickOnScreen(ctx, SELECTORS.loginButton, 'the Accedi button'),
      AFTER_SUBMIT_MS,
    );
    const after = nav
      ? await readUntil(ctx, (p) => stateOf(p) !== 'unknown', 5_000)
      : await readPage(ctx);
    const fields = chainFields(after);
    if (fields.state === 'login' || fields.state === 'login_hydrated') {
      // No new page: the site refused the credentials (its error line says why).
      return {
        success: false,
        error: 'login_rejected',
        notice: after.notice,
        ...fields,
        message: `The site did not accept the login${after.notice ? `: "${after.notice}"` : ''}`,
      };
    }
    const how = byEnter ? 'pressed Enter' : 'clicked Accedi';
    return {
      ...fields,
      message:
        fields.state === '2fa_pending'
          ? `Typed the alias and the password, ${how}: the site sent a code by SMS`
          : `Typed the alias and the password, ${how}: state ${fields.state}`,
    };
  },
});
