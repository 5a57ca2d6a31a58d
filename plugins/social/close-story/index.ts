import { definePlugin } from '@persona-browser/plugin-sdk';
import { closeStory } from '../overlays';
import { readPage, requireState, stateOf } from '../page-state';

interface Params {
  escape_probability: number;
}

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    requireState(page, 'story_open');
    const handle = page.story?.handle ?? null;
    const { page: after, method } = await closeStory(ctx, p.escape_probability);
    const state = stateOf(after);
    const how = method === 'escape' ? 'Escape' : 'its Close button';
    return {
      handle,
      state,
      method,
      page_url: after.url,
      message: `Closed the story viewer${handle ? ` on @${handle}` : ''} with ${how}; now in state ${state}`,
    };
  },
});
