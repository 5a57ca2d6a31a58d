import type { NavigationResult, PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { ENTER_PROBABILITY } from './site';

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
