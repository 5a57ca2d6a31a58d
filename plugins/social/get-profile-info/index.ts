import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { readPage, requireState } from '../page-state';
import { followStatusOf, parseCount, readAbout } from '../people';

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    const page = await readPage(ctx);
    requireState(page, 'profile');
    const about = await readAbout(ctx);
    const handle = page.profile?.handle ?? '';
    if (!about) throw new SiteError(`the header of @${handle}'s profile`, `none at ${page.url}`);
    const counts = {
      posts: parseCount(about.posts),
      followers: parseCount(about.followers),
      following: parseCount(about.following),
    };
    const own = handle === page.ownHandle;
    const followers = counts.followers === null ? 'an unknown number of' : counts.followers;
    return {
      handle,
      name: about.name,
      bio: about.bio,
      links: about.links,
      counts,
      verified: about.verified,
      is_private: about.isPrivate,
      follow_status: own ? 'own_profile' : followStatusOf(page.profile?.followButton ?? null),
      own_profile: own,
      has_story: page.profile?.hasStory ?? false,
      page_url: page.url,
      message:
        `@${handle}${about.verified ? ' (verified)' : ''}${about.isPrivate ? ', private' : ''}: ` +
        `${followers} followers`,
    };
  },
});
