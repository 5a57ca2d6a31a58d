import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { describePage, guide, landing, readPage, readUntil, stateOf } from '../page-state';
import { PATHS, baseUrl } from '../site';

/** The login page, or the logged-in area a live session redirects to. */
const LANDING_WAIT_MS = 10_000;

const SAID: Record<string, string> = {
  login:
    'The login page is open; its form is not ready yet (bank/bank-a/hydrate-login waits for it)',
  login_hydrated: 'The login page is open and its form is ready',
  app_confirmation: 'The site went on to the confirmation of a login already under way',
};

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    const from_state = stateOf(await readPage(ctx));
    const url = `${baseUrl(ctx)}${PATHS.login}`;
    await ctx.page.goto(url);
    const page = await readUntil(ctx, (p) => stateOf(p) !== 'unknown', LANDING_WAIT_MS);
    const state = stateOf(page);
    if (state === 'unknown') {
      throw new SiteError("bank-a's login page", describePage(page), { ...guide(page) });
    }
    return {
      from_state,
      ...landing(page),
      message:
        SAID[state] ??
        `A session was still live: the site went on to its logged-in area (${state})`,
    };
  },
});
