import { definePlugin } from '@persona-browser/plugin-sdk';

interface Params {
  description: string;
}

/**
 * Where a described object is on screen, as ops `search-object` answers it, for callers that
 * drive everything through plugins. The worker's vision client does the work (keys, fallback
 * from the free key to the paid one, the 0–1000 scale to CSS pixels); a missing key or an
 * object the model cannot find comes back from it as `success: false` naming the cause.
 */
export default definePlugin<Params>({
  validate: (p) => (p.description.trim() ? null : 'description must not be blank'),
  async run(ctx, p) {
    const description = p.description.trim();
    // The vision client's answer is the response, field for field.
    return { description, ...(await ctx.vision.locate(description)) };
  },
});
