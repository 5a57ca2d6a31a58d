import type { PluginContext } from '@persona-browser/plugin-sdk';
import { SiteError, definePlugin } from '@persona-browser/plugin-sdk';
import { fillField, submitForm } from '../human';
import { describePage, readPage, refuseInterstitial, settledPage } from '../page-state';
import { SAVE_PASTE_PROBABILITY, SELECTORS, baseUrl, saveWaitMs } from '../site';

/** The manifest requires url unless from_check is true. */
type SaveParams = { from_check: true; url?: string } | { from_check: false; url: string };

/** Time kept back from the call's deadline to read the page and answer. */
const ANSWER_MARGIN_MS = 10_000;
/** How often the progress page is looked at while the archive works. */
const POLL_MS = 1_000;
/** Looks at a page that is neither progress nor snapshot before calling it unexpected. */
const ODD_LOOKS = 3;

const NOT_FOUND = 'the "No results" page left by archive/check, with its "archive this url" form';

/**
 * Submits the "archive this url" form of the "No results" page on screen: as the archive
 * prefilled it, or filled in with `url`. Answers the URL submitted.
 */
async function saveFromCheck(ctx: PluginContext, url: string | undefined): Promise<string> {
  const page = await settledPage(ctx);
  refuseInterstitial(page, NOT_FOUND);
  if (!page.noResults || page.archiveFormUrl === null) {
    throw new SiteError(NOT_FOUND, describePage(page));
  }
  const prefilled = page.archiveFormUrl.trim();
  if (prefilled && url && prefilled !== url) {
    throw new SiteError(`the archive form for ${url}`, `one holding ${prefilled}`);
  }
  const target = prefilled || url;
  if (!target) throw new SiteError('a prefilled archive form (or a url)', 'an empty form');
  if (!prefilled) {
    const field = 'the archive form’s URL field';
    await fillField(ctx, SELECTORS.archiveInput, target, SAVE_PASTE_PROBABILITY, field);
  }
  await submitForm(ctx, SELECTORS.archiveButton, 'the archive form', !prefilled);
  return target;
}

/** Pastes (or types) `url` into the home page's save form and submits it. */
async function saveFromHome(ctx: PluginContext, url: string): Promise<void> {
  await ctx.page.goto(`${baseUrl(ctx)}/`);
  const home = await settledPage(ctx);
  refuseInterstitial(home, "the archive's home page with its save form");
  if (!home.saveForm)
    throw new SiteError("the archive's home page with its save form", describePage(home));
  await fillField(ctx, SELECTORS.saveInput, url, SAVE_PASTE_PROBABILITY, 'the save field');
  await submitForm(ctx, SELECTORS.saveButton, 'the save form', true);
}

const FOLLOWING = 'the save in progress or its snapshot';

/**
 * Follows the archive's progress page until it moves on to the snapshot, within the family's
 * wait and the call's deadline. Answers the message for the page it ends on.
 */
async function followSave(ctx: PluginContext): Promise<string> {
  const started = Date.now();
  const until = started + Math.min(saveWaitMs(ctx), ctx.remainingMs() - ANSWER_MARGIN_MS);
  let oddLooks = 0;
  for (;;) {
    const page = await readPage(ctx);
    refuseInterstitial(page, FOLLOWING);
    if (page.snapshot) return 'Saved';
    // Neither progress nor snapshot may be a document half replaced: look again a few times.
    oddLooks = page.wip ? 0 : oddLooks + 1;
    if (oddLooks >= ODD_LOOKS) throw new SiteError(FOLLOWING, describePage(page));
    const left = until - Date.now();
    if (page.wip && left <= 0) {
      const s = Math.round((Date.now() - started) / 1000);
      return `Save in progress: the archive was still working after ${s} s; current_url shows its progress`;
    }
    await ctx.sleep(page.wip ? Math.min(POLL_MS, left) : POLL_MS);
  }
}

export default definePlugin<SaveParams>({
  async run(ctx, p) {
    let url: string;
    if (p.from_check) url = await saveFromCheck(ctx, p.url);
    else {
      url = p.url;
      await saveFromHome(ctx, url);
    }
    const message = await followSave(ctx);
    return { url, from_check: p.from_check, current_url: ctx.page.url(), message };
  },
});
