import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import { readPage, readUntil, requireProfile } from '../page-state';
import type { FollowStatus } from '../people';
import { followStatusOf } from '../people';
import { SELECTORS } from '../site';

interface Params {
  handle?: string;
}

/** The site answers a follow within a moment and relabels the button. */
const FOLLOW_WAIT_MS = 10_000;

const ALREADY: Partial<Record<FollowStatus, string>> = {
  following: 'Already following',
  requested: 'A follow request is already pending for',
};

export default definePlugin<Params>({
  async run(ctx, p) {
    const page = await readPage(ctx);
    const handle = requireProfile(page, p.handle);
    const label = page.profile?.followButton ?? null;
    const before = followStatusOf(label);
    if (before === 'own_profile' || handle === page.ownHandle) {
      throw new SiteError(
        'the profile of another account',
        `your own profile @${handle} at ${page.url}: a persona cannot follow itself`,
      );
    }
    if (before === null) {
      throw new SiteError(
        `a Follow, Following or Requested button on @${handle}'s profile`,
        `${label === null ? 'no button' : `a button "${label}"`} at ${page.url}`,
      );
    }
    const answer = (status: FollowStatus, changed: boolean, url: string, message: string) => ({
      handle,
      follow_status_before: before,
      follow_status: status,
      changed,
      page_url: url,
      message,
    });
    const already = ALREADY[before];
    // Following or requested: a click would open the unfollow menu or withdraw the request.
    if (already) return answer(before, false, page.url, `${already} @${handle}: nothing clicked`);

    await clickOnScreen(ctx, SELECTORS.followButton, `the Follow button of @${handle}`);
    const after = await readUntil(
      ctx,
      (pg) => followStatusOf(pg.profile?.followButton ?? null) !== 'not_following',
      FOLLOW_WAIT_MS,
    );
    const status = followStatusOf(after.profile?.followButton ?? null);
    if (status !== 'following' && status !== 'requested') {
      throw new SiteError(
        `the follow button of @${handle} to turn to Following or Requested after a click`,
        `it reads "${after.profile?.followButton ?? 'nothing'}" at ${after.url}`,
      );
    }
    return answer(
      status,
      true,
      after.url,
      status === 'requested'
        ? `Asked to follow @${handle}: a private account, the request is pending`
        : `Now following @${handle}`,
    );
  },
});
