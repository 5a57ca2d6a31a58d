import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { SocialPage } from './page-state';
import { readUntil } from './page-state';
import { SELECTORS } from './site';

/** A dialog closes with a short animation. */
const DIALOG_CLOSE_MS = 5_000;

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
