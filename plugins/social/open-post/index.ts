import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { describePage, readPage, readUntil, stateOf } from '../page-state';
import { postMediaType, readFeed, readPost } from '../posts';

interface Params {
  shortcode: string;
}

/** A tile opens a dialog at once; a feed link may load the post's own page. */
const OPEN_WAIT_MS = 15_000;

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    const from_state = stateOf(page);
    const answer = async (clicked: boolean) => {
      const d = await readPost(ctx);
      if (!d) throw new SiteError(`post ${p.shortcode} open`, describePage(await readPage(ctx)));
      const media_type = postMediaType(d);
      const done = clicked ? 'Opened' : 'Already open:';
      return {
        shortcode: p.shortcode,
        author: d.author,
        from_state,
        state: 'post_open',
        media_type,
        total_media: d.media.length,
        page_url: ctx.page.url(),
        message: `${done} ${media_type} ${p.shortcode} by @${d.author} with ${d.media.length} media`,
      };
    };
    if (from_state === 'post_open' && page.post?.shortcode === p.shortcode) return answer(false);
    if (from_state !== 'profile' && from_state !== 'feed') {
      const hint =
        from_state === 'post_open'
          ? 'close the open post first with social/close-post'
          : 'go to a profile with social/open-account or to the feed with social/go-home';
      throw new SiteError('state profile or feed', `${describePage(page)}; ${hint}`, {
        state: from_state,
        hint,
      });
    }
    const selector =
      from_state === 'profile'
        ? page.grid.find((t) => t.shortcode === p.shortcode)?.selector
        : (await readFeed(ctx)).find((x) => x.shortcode === p.shortcode)?.selector;
    if (!selector) return { success: false, error: 'shortcode_not_in_view' };
    await clickOnScreen(ctx, selector, `the link of post ${p.shortcode}`);
    const after = await readUntil(
      ctx,
      (pg) => pg.post?.shortcode === p.shortcode || pg.loginWall,
      OPEN_WAIT_MS,
    );
    if (after.post?.shortcode !== p.shortcode) {
      throw new SiteError(`post ${p.shortcode} open after a click on it`, describePage(after));
    }
    return answer(true);
  },
});
