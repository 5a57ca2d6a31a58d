import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { describePage, readPage, readUntil, requireProfile, stateOf } from '../page-state';
import { SELECTORS } from '../site';

interface Params {
  handle?: string;
}

/** The viewer opens with an animation and loads the first story. */
const VIEWER_WAIT_MS = 10_000;

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    const handle = requireProfile(page, p.handle);
    if (!page.profile?.hasStory) {
      throw new SiteError(
        `a story ring around @${handle}'s picture`,
        `none at ${page.url}: @${handle} has no story to watch now`,
      );
    }
    await clickOnScreen(ctx, SELECTORS.storyRing, `the story ring of @${handle}`);
    const opened = await readUntil(ctx, (pg) => stateOf(pg) === 'story_open', VIEWER_WAIT_MS);
    if (stateOf(opened) !== 'story_open') {
      throw new SiteError(
        `the story viewer after a click on @${handle}'s ring`,
        describePage(opened),
      );
    }
    const shown = opened.story?.handle ?? handle;
    return {
      handle: shown,
      state: 'story_open',
      method: 'profile_ring',
      page_url: opened.url,
      message: `The story viewer is open on @${shown}; close it with social/close-story`,
    };
  },
});
