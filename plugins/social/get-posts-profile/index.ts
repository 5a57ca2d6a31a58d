import { definePlugin } from '@persona-browser/plugin-sdk';
import { readPage, requireState } from '../page-state';

interface Params {
  shortcode?: string;
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    requireState(page, 'profile');
    const handle = page.profile?.handle ?? '';
    // 1-based, in the grid's order: pinned posts first, then newest first.
    const all = page.grid.map((t, i) => ({
      index: i + 1,
      shortcode: t.shortcode,
      href: new URL(t.href, page.url).href,
      selector: t.selector,
      media_type: t.media_type,
      pinned: t.pinned,
      caption: t.caption,
    }));
    const posts = p.shortcode ? all.filter((t) => t.shortcode === p.shortcode) : all;
    if (p.shortcode && posts.length === 0) {
      // The API's error code for this case: the host answers it as `success: false, error`.
      return { success: false, error: 'shortcode_not_in_view' };
    }
    const message = p.shortcode
      ? `Post ${p.shortcode} is number ${posts[0]?.index} of the ${all.length} rendered on @${handle}'s grid`
      : `${posts.length} post(s) rendered on @${handle}'s grid; scroll and call again for more`;
    return { handle, count: posts.length, posts, page_url: page.url, message };
  },
});
