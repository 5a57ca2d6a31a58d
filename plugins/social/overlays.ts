import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { closeDialog } from './human';
import type { SocialPage } from './page-state';
import { readUntil } from './page-state';
import { PEOPLE, SELECTORS } from './site';

/**
 * Closing what covers the page (the story viewer, a post or list dialog) as a person does:
 * Escape or the close control. Used by social/close-story, social/go-home and
 * social/open-own-profile.
 */

export type CloseMethod = 'button' | 'escape';

/** The viewer and the dialogs close with a short animation (a story page loads the feed). */
const CLOSE_WAIT_MS = 8_000;
/** How long a person waits for Escape to work before reaching for the close button. */
const ESCAPE_GRACE_MS = 1_500;

/**
 * Closes the story viewer: Escape with probability `escapeProbability`, else its Close control.
 * Answers the page once the viewer is gone and how it was closed.
 */
export async function closeStory(
  ctx: PluginContext,
  escapeProbability: number,
): Promise<{ page: SocialPage; method: CloseMethod }> {
  const method: CloseMethod = ctx.chance(escapeProbability) ? 'escape' : 'button';
  if (method === 'escape') await ctx.gestures.pressEscape();
  else await clickOnScreen(ctx, PEOPLE.storyClose, 'the Close button of the story viewer');
  const page = await readUntil(ctx, (p) => !p.story, CLOSE_WAIT_MS);
  if (page.story) {
    const how = method === 'escape' ? 'Escape' : 'its Close button';
    throw new SiteError(`the story viewer closed after ${how}`, `it is still open at ${page.url}`);
  }
  return { page, method };
}

/**
 * Closes a post or list dialog: Escape with probability `escapeProbability`, and the close
 * button when Escape did nothing (or was not tried). Answers the page and what closed it.
 */
export async function closeAnyDialog(
  ctx: PluginContext,
  what: string,
  escapeProbability: number,
): Promise<{ page: SocialPage; method: CloseMethod }> {
  if (ctx.chance(escapeProbability) && (await ctx.page.exists(SELECTORS.dialog))) {
    await ctx.gestures.pressEscape();
    const page = await readUntil(ctx, (p) => !p.post && !p.list, ESCAPE_GRACE_MS);
    if (!page.post && !page.list) return { page, method: 'escape' };
  }
  return { page: await closeDialog(ctx, what), method: 'button' };
}

/** A dialog's name in a sentence. */
export function dialogName(p: SocialPage): string {
  if (p.post) return 'the open post';
  if (p.list) return `the ${p.list.kind} list`;
  return 'the dialog';
}
