import type { NavigationResult, PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError } from '@persona-browser/plugin-sdk';
import { ENTER_PROBABILITY } from './site';

/** Scrolls a person would make to bring a control on screen before giving up. */
const MAX_SCROLLS = 4;

/** Clicks `selector` like a person: scrolled into view first if it is off screen. */
export async function clickOnScreen(
  ctx: PluginContext,
  selector: string,
  what: string,
): Promise<void> {
  for (let scrolls = 0; ; scrolls += 1) {
    const seen = await ctx.gestures.checkVisible(selector);
    if (!seen.found)
      throw new SiteError(what, `no element matching ${selector} at ${ctx.page.url()}`);
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
 * Clicks a text field and pastes or types `text` into it (pasting with `pasteProbability`);
 * the field must then hold exactly `text`.
 */
export async function fillField(
  ctx: PluginContext,
  selector: string,
  text: string,
  pasteProbability: number,
  what: string,
): Promise<'paste' | 'type'> {
  await clickOnScreen(ctx, selector, what);
  const how = ctx.chance(pasteProbability) ? 'paste' : 'type';
  if (how === 'paste') await ctx.gestures.paste(text);
  else await ctx.gestures.type(text);
  ctx.log.info('filled a field', { field: what, how, chars: text.length });
  const holds = await ctx.page.value(selector);
  if (holds !== text) {
    throw new SiteError(`${what} holding ${text}`, `it holds ${JSON.stringify(holds)}`);
  }
  return how;
}

/**
 * Submits a form, by Enter when its field has the focus or by its button, as people do, and
 * waits for the page it leads to.
 */
export async function submitForm(
  ctx: PluginContext,
  button: string,
  what: string,
  fieldFocused: boolean,
): Promise<NavigationResult> {
  const byEnter = fieldFocused && ctx.chance(ENTER_PROBABILITY);
  const nav = await ctx.page.navigationAfter(() =>
    byEnter ? ctx.gestures.pressEnter() : clickOnScreen(ctx, button, `the button of ${what}`),
  );
  if (!nav) {
    throw new SiteError(`a new page after submitting ${what}`, `${ctx.page.url()} stayed put`);
  }
  return nav;
}
