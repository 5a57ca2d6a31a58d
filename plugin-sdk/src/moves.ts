import type { PluginContext } from './context';
import { SiteError } from './plugin';

/** Scrolls a person makes to bring a control on screen before giving up. */
const MAX_SCROLLS = 4;
/** A wheel scroll keeps moving the page a moment after its last notch. */
const SETTLE_MS = 400;

/**
 * Clicks `selector` like a person: when it is not wholly on screen, wheel-scrolls to bring it
 * to the middle of the viewport first and lets the page come to rest (a control at the very
 * bottom of a page can bounce back out of view with the scroll's recoil). A control that is
 * not on the page, or that stays out of view, is a SiteError naming `what`.
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
    const box = seen.bounding_box;
    // A control larger than the screen is never wholly on it: seen at all is enough.
    const larger = !!box && (box.height > seen.viewport.height || box.width > seen.viewport.width);
    if (seen.fully_visible || (seen.visible && larger)) break;
    if (scrolls >= MAX_SCROLLS || !box) {
      throw new SiteError(`${what} on screen`, `it stayed out of view at ${ctx.page.url()}`);
    }
    await ctx.gestures.scroll(Math.round(box.y + box.height / 2 - seen.viewport.height / 2));
    await ctx.sleep(SETTLE_MS);
  }
  await ctx.gestures.click(selector);
}

/**
 * Reads the page with `read` until `done` holds of what it read, or `timeoutMs` passes (never
 * past the call's deadline), pausing `pollMs` between reads; answers the last read either way.
 */
export async function pollUntil<T>(
  ctx: PluginContext,
  read: () => Promise<T>,
  done: (read: T) => boolean,
  timeoutMs: number,
  pollMs = 200,
): Promise<T> {
  const until = Date.now() + Math.min(timeoutMs, ctx.remainingMs());
  for (;;) {
    const seen = await read();
    if (done(seen) || Date.now() >= until) return seen;
    await ctx.sleep(pollMs);
  }
}
