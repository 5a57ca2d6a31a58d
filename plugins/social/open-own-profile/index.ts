import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { closeDialog } from '../human';
import { closeStory, dialogName } from '../overlays';
import { describePage, readPage, readUntil, stateOf } from '../page-state';
import { refuseLoginWall } from '../people';
import { REACHED_BY, SELECTORS } from '../site';

/** A profile is a new document: the site loads it after the click. */
const LANDING_WAIT_MS = 15_000;

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    let page = await readPage(ctx);
    refuseLoginWall(page, 'a logged-in page of the site');
    const closed: string[] = [];
    if (page.story && page.hasNav) {
      // The viewer over a profile covers the navigation: its Close button first.
      page = (await closeStory(ctx, 0)).page;
      closed.push('the story viewer');
    }
    if (page.post || page.list) {
      const what = dialogName(page);
      page = await closeDialog(ctx, what);
      closed.push(what);
    }
    if (!page.hasNav || page.story) {
      throw new SiteError(
        "a page with the site's left navigation",
        `${describePage(page)}; ${REACHED_BY.feed}`,
        { state: stateOf(page), hint: REACHED_BY.feed },
      );
    }
    const own = page.ownHandle;
    if (!own) {
      throw new SiteError(
        "the left navigation's link to the persona's own profile",
        `none at ${page.url}`,
      );
    }
    const said = (done: string): string =>
      closed.length > 0
        ? `Closed ${closed.join(' and ')}, then ${done.charAt(0).toLowerCase()}${done.slice(1)}`
        : done;
    if (stateOf(page) === 'profile' && page.profile?.handle === own) {
      return {
        handle: own,
        state: 'profile',
        page_url: page.url,
        message: said(`Already on your own profile @${own}`),
      };
    }
    await clickOnScreen(ctx, SELECTORS.ownProfileLink, "the navigation's link to your profile");
    const landed = await readUntil(
      ctx,
      (p) => stateOf(p) === 'profile' && p.profile?.handle === own,
      LANDING_WAIT_MS,
    );
    refuseLoginWall(landed, `your own profile @${own}`);
    const state = stateOf(landed);
    if (state !== 'profile' || landed.profile?.handle !== own) {
      throw new SiteError(`your own profile @${own}`, describePage(landed));
    }
    return {
      handle: own,
      state,
      page_url: landed.url,
      message: said(`Opened your own profile @${own}`),
    };
  },
});
