import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import type { SocialPage } from './page-state';
import { readUntil } from './page-state';
import { SELECTORS } from './site';

/** Scrolls a person would make to bring a control on screen before giving up. */
const MAX_SCROLLS = 4;
/** A dialog closes with a short animation. */
const DIALOG_CLOSE_MS = 5_000;

/** Clicks `selector` like a person: scrolled into view first if it is off screen. */
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
    // Aim the element at the middle of the viewport.
    const box = seen.bounding_box;
    await ctx.gestures.scroll(box.y + box.height / 2 - seen.viewport.height / 2);
  }
  await ctx.gestures.click(selector);
}

/**
 * Closes a dialog open on top of the page (a post, a following/followers list) with a click on
 * its close button, as a person would before touching what is behind it. Answers the page
 * once the dialog is gone. (`closeAnyDialog` in overlays.ts tries Escape first by chance.)
 */
export async function closeDialog(ctx: PluginContext, what: string): Promise<SocialPage> {
  await clickOnScreen(ctx, SELECTORS.dialogClose, `the close button of ${what}`);
  const after = await readUntil(ctx, (p) => !p.post && !p.list, DIALOG_CLOSE_MS);
  if (after.post || after.list) {
    throw new SiteError(
      `${what} closed after its close button`,
      `it is still open at ${after.url}`,
    );
  }
  return after;
}
