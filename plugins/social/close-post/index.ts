import { definePlugin } from '@persona-browser/plugin-sdk';
import { closeAnyDialog } from '../overlays';
import { readPage, requireState, stateOf } from '../page-state';

interface Params {
  escape_probability: number;
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    requireState(page, 'post_open');
    const shortcode = page.post?.shortcode ?? null;
    const { page: after, method } = await closeAnyDialog(
      ctx,
      'the open post',
      p.escape_probability,
    );
    const state = stateOf(after);
    const how = method === 'escape' ? 'Escape' : 'its close button';
    return {
      shortcode,
      state,
      method,
      page_url: after.url,
      message: `Closed ${shortcode ? `post ${shortcode}` : 'the post'} with ${how}; now in state ${state}`,
    };
  },
});
