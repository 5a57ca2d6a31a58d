import { definePlugin } from '@persona-browser/plugin-sdk';
import type { SocialPage, SocialState } from '../page-state';
import { readPage, stateOf } from '../page-state';

/** A type, not an interface: a plugin's result must be a plain record. */
type StateAnswer = Record<string, unknown> & { state: SocialState; page_url: string };

/** "283" or "1.2K" or "3M followers" as a number; null when the text holds none. */
function countOf(text: string | null): number | null {
  const m = /([\d.,]+)\s*([KM])?/i.exec(text ?? '');
  const digits = m?.[1];
  if (digits === undefined) return null;
  const n = Number(digits.replace(/,/g, ''));
  const scale = { K: 1e3, M: 1e6 }[(m?.[2] ?? '').toUpperCase()] ?? 1;
  return Number.isFinite(n) ? Math.round(n * scale) : null;
}

const FOLLOW_STATUS: Record<string, string> = {
  follow: 'not_following',
  'follow back': 'not_following',
  following: 'following',
  requested: 'requested',
  'edit profile': 'own_profile',
};

function followStatus(p: SocialPage): string | null {
  const label = p.profile?.followButton?.toLowerCase() ?? null;
  if (label === null) return null;
  return FOLLOW_STATUS[label] ?? label;
}

function hintFor(p: SocialPage): string {
  if (p.loginWall) {
    return 'The persona is not logged in: log in through the live view, then call social/state again';
  }
  return p.hasNav
    ? 'Open a profile with social/open-account, or return to the feed with social/go-home'
    : 'Not a page of the site the plugins know: return to the feed with social/go-home';
}

/** What the page shows, in the fields of the state it is in. */
function answer(p: SocialPage): StateAnswer {
  const state = stateOf(p);
  // Every field is always there (null where the state has none), so clients need no guessing.
  const out: StateAnswer = {
    state,
    page_url: p.url,
    handle: null,
    author: null,
    shortcode: null,
    media_type: null,
    liked: null,
    carousel: null,
    posts_in_view: null,
    follow_status: followStatus(p),
    story: null,
    own_handle: p.ownHandle,
    own_profile: null,
    badges: p.badges,
    list: null,
    hint: null,
    message: '',
  };
  switch (state) {
    case 'feed':
      out.posts_in_view = { articles: p.feedArticles };
      out.message = `The feed, with ${p.feedArticles} post(s) rendered`;
      break;
    case 'profile': {
      const handle = p.profile?.handle ?? null;
      out.handle = handle;
      out.own_profile = handle !== null && handle === p.ownHandle;
      out.story = { has_story: p.profile?.hasStory ?? false };
      out.posts_in_view = { grid_thumbnails: p.grid.length };
      out.message = `The profile of @${handle}, with ${p.grid.length} grid post(s) rendered`;
      break;
    }
    case 'post_open': {
      const post = p.post!;
      out.handle = p.profile?.handle ?? post.author;
      out.author = post.author;
      out.shortcode = post.shortcode;
      out.media_type = post.media.current === 'video' ? 'video' : 'photo';
      out.liked = post.liked;
      if (post.media.total > 1) {
        out.carousel = { img_index: post.media.position, has_previous: post.media.has_previous };
      }
      out.message = `Post ${post.shortcode} by @${post.author} is open`;
      break;
    }
    case 'story_open':
      out.story = { handle: p.story?.handle ?? null };
      out.message = `The story viewer is open on @${p.story?.handle}`;
      break;
    case 'following_open':
    case 'followers_open': {
      const kind = p.list!.kind;
      const handle = p.profile?.handle ?? null;
      out.handle = handle;
      out.list = {
        kind,
        rows_in_view: p.list!.rows,
        expected: countOf(
          kind === 'following' ? (p.profile?.following ?? null) : (p.profile?.followers ?? null),
        ),
      };
      out.message = `The ${kind} list of @${handle} is open, ${p.list!.rows} row(s) rendered`;
      break;
    }
    default:
      out.hint = hintFor(p);
      out.message = p.loginWall
        ? `The login wall at ${p.url}`
        : `No known state at ${p.url} ("${p.title}")`;
  }
  return out;
}

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    // Observes only: one read of the live page, no navigation, no gesture.
    return answer(await readPage(ctx));
  },
});
