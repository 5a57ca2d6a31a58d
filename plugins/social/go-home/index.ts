import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { closeAnyDialog, closeStory, dialogName } from '../overlays';
import { describePage, readPage, readUntil, stateOf } from '../page-state';
import { refuseLoginWall } from '../people';
import { SELECTORS, baseUrl, isOnSite } from '../site';

interface Params {
  escape_probability: number;
}

/** The feed is a new document: the site loads it after the click or the navigation. */
const FEED_WAIT_MS = 15_000;

const how = (method: string): string => (method === 'escape' ? 'Escape' : 'its close button');

export default definePlugin<Params>({
  async run(ctx, p) {
    let page = await readPage(ctx);
    const from_state = stateOf(page);
    refuseLoginWall(page, 'a logged-in page of the site');
    const steps: string[] = [];
    if (page.story) {
      const closed = await closeStory(ctx, p.escape_probability);
      steps.push(`closed the story viewer with ${how(closed.method)}`);
      page = closed.page;
    }
    if (page.post || page.list) {
      const what = dialogName(page);
      const closed = await closeAnyDialog(ctx, what, p.escape_probability);
      steps.push(`closed ${what} with ${how(closed.method)}`);
      page = closed.page;
    }
    refuseLoginWall(page, 'a logged-in page of the site');
    const onSite = isOnSite(ctx, page.url);
    if (!(onSite && stateOf(page) === 'feed')) {
      if (onSite && page.hasNav) {
        await clickOnScreen(ctx, SELECTORS.homeLink, 'Home in the left navigation');
        steps.push('clicked Home in the left navigation');
      } else {
        // No navigation to click (another site, a page of the site without it): the address.
        const home = `${baseUrl(ctx)}/`;
        await ctx.page.goto(home);
        steps.push(`navigated to ${home}`);
      }
      page = await readUntil(ctx, (pg) => stateOf(pg) === 'feed' || pg.loginWall, FEED_WAIT_MS);
    }
    refuseLoginWall(page, 'the feed');
    if (stateOf(page) !== 'feed') throw new SiteError('the feed', describePage(page));
    const said = steps.length > 0 ? steps.join(', then ') : 'already on the feed, nothing to do';
    return {
      from_state,
      state: 'feed',
      steps,
      page_url: page.url,
      message: `${said.charAt(0).toUpperCase()}${said.slice(1)}`,
    };
  },
});
