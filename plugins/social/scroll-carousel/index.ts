import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { MediaStrip } from '../page-state';
import { readPage, readUntil, requireState } from '../page-state';
import { SELECTORS } from '../site';

interface Params {
  direction: 'right' | 'left';
}

/** The slide moves with a short animation. */
const SLIDE_WAIT_MS = 5_000;
/** Two reads this far apart that agree: the strip has stopped moving. */
const STILL_MS = 250;

const same = (a: MediaStrip, b: MediaStrip): boolean =>
  a.position === b.position && a.has_next === b.has_next && a.has_previous === b.has_previous;

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    requireState(page, 'post_open');
    const before = page.post!.media;
    const right = p.direction === 'right';
    const possible = right ? before.has_next : before.has_previous;
    let media = before;
    if (possible) {
      const button = right ? SELECTORS.nextButton : SELECTORS.previousButton;
      await clickOnScreen(ctx, button, `the carousel's ${right ? 'Next' : 'Go back'} button`);
      const moved = await readUntil(
        ctx,
        (pg) => !!pg.post && pg.post.media.position !== before.position,
        SLIDE_WAIT_MS,
      );
      if (!moved.post || moved.post.media.position === before.position) {
        throw new SiteError(
          `the carousel to move ${p.direction}`,
          `it stayed on media ${before.position} of ${before.total} at ${moved.url}`,
        );
      }
      media = moved.post.media;
      // Let the slide come to rest before reporting where it is.
      for (let i = 0; i < 10; i += 1) {
        await ctx.sleep(STILL_MS);
        const again = (await readPage(ctx)).post?.media;
        if (!again || same(again, media)) break;
        media = again;
      }
    }
    const where = `media ${media.position} of ${media.total} (${media.current})`;
    let message = `Moved ${p.direction} to ${where}`;
    if (!possible) {
      message =
        before.total === 1
          ? 'The post has a single media: nothing to scroll'
          : `Already at the ${right ? 'last' : 'first'} media: stayed on ${where}`;
    }
    return {
      direction: p.direction,
      moved: possible,
      position: media.position,
      total_media: media.total,
      current_media_type: media.current,
      has_previous: media.has_previous,
      has_next: media.has_next,
      page_url: ctx.page.url(),
      message,
    };
  },
});
