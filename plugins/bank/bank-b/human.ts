import type { NavigationResult, PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';

/** Clicks a link or button like a person and waits for the document it loads. */
export async function clickToPage(
  ctx: PluginContext,
  selector: string,
  what: string,
  timeoutMs = 15_000,
): Promise<NavigationResult> {
  const nav = await ctx.page.navigationAfter(() => clickOnScreen(ctx, selector, what), timeoutMs);
  if (!nav) throw new SiteError(`a new page after a click on ${what}`, `${ctx.page.url()} stayed`);
  return nav;
}
