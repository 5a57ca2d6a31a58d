import { definePlugin } from '@persona-browser/plugin-sdk';
import { readPage, requireState } from '../page-state';
import { readFeed } from '../posts';

interface Params {
  shortcode?: string;
}

export default definePlugin<Params>({
  async run(ctx, p) {
    requireState(await readPage(ctx), 'feed');
    const all = await readFeed(ctx);
    const posts = p.shortcode ? all.filter((x) => x.shortcode === p.shortcode) : all;
    if (p.shortcode && posts.length === 0) {
      return { success: false, error: 'shortcode_not_in_view' };
    }
    const message = p.shortcode
      ? `Post ${p.shortcode} by @${posts[0]?.author} is number ${posts[0]?.index} of the ${all.length} rendered on the feed`
      : `${posts.length} post(s) rendered on the feed; scroll and call again for more`;
    return { count: posts.length, posts, page_url: ctx.page.url(), message };
  },
});
