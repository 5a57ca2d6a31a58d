import type { PluginContext } from './context';
import { SiteError } from './plugin';

/** Scrolls a person makes to bring a control on screen before giving up. */
const MAX_SCROLLS = 4;

/**
 * Clicks `selector` like a person: when it is off screen, wheel-scrolls to bring it to the
 * middle of the viewport first (a few tries). A control that is not on the page, or that stays
 * out of view, is a SiteError naming `what`.
 */
export async function clickOnScreen(
  ctx: PluginContext,
  selector: string,
  what: string,
): Promise<void> {
  for (let scrolls = 0; ; scrolls += 1) {
    const seen = await ctx.gestures.checkVisible(selector);
    if (!seen.found) {
      throw new SiteError(what, `no element matching ${selector} at ${ctx.page.url()}`);
    }
    if (seen.visible) break;
    if (scrolls >= MAX_SCROLLS || !seen.bounding_box) {
      throw new SiteError(`${what} on screen`, `it stayed out of view at ${ctx.page.url()}`);
    }
    const box = seen.bounding_box;
    await ctx.gestures.scroll(box.y + box.height / 2 - seen.viewport.height / 2);
  }
  await ctx.gestures.click(selector);
}
