import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';

/** A field a site's script resets once (its late start) gets a second go. */
const FILL_ATTEMPTS = 2;

/**
 * Clicks a field, empties it when it holds text, types `value` key by key (typos corrected) and
 * checks the field holds exactly it. Never says the value, nor its length: it may be a
 * credential.
 */
export async function fillField(
  ctx: PluginContext,
  selector: string,
  value: string,
  what: string,
): Promise<void> {
  let holds: string | null = null;
  for (let attempt = 1; attempt <= FILL_ATTEMPTS; attempt += 1) {
    await clickOnScreen(ctx, selector, what);
    if ((await ctx.page.value(selector)) !== '') await ctx.gestures.selectAll();
    await ctx.gestures.type(value);
    holds = await ctx.page.value(selector);
    if (holds === value) {
      ctx.log.info('filled a field', { field: what });
      return;
    }
  }
  throw new SiteError(
    `${what} holding exactly what was typed`,
    holds === null
      ? `the field gone at ${ctx.page.url()}`
      : `something else in it at ${ctx.page.url()}`,
  );
}
