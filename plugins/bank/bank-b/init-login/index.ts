import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { chainFields, describePage, readUntil, stateOf } from '../page-state';
import { PATTERNS, SELECTORS, baseUrl } from '../site';

/** The login page, or the logged-in area a live session redirects to, once its DOM is there. */
const PAGE_WAIT_MS = 15_000;

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    const address = `${baseUrl(ctx)}${PATTERNS.loginPath}`;
    await ctx.page.goto(address);
    await ctx.page.waitForAny(
      { login: SELECTORS.loginForm, otp: SELECTORS.otpForm, menu: SELECTORS.menu },
      PAGE_WAIT_MS,
    );
    const p = await readUntil(ctx, (pg) => stateOf(pg) !== 'unknown', 2_000);
    const fields = chainFields(p);
    if (fields.state === 'unknown') {
      throw new SiteError(`bank-b's login page at ${address}`, describePage(p), fields);
    }
    const message =
      fields.state === 'login' || fields.state === 'login_hydrated'
        ? `Opened the login page${fields.session_expired ? ' (the last session expired)' : ''}`
        : `Opened the login page; a live session took it to state ${fields.state}`;
    return { ...fields, message };
  },
});
