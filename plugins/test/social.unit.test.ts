import { followStatusOf, parseCount } from '../social/people';
import { findPostMedia, parseApiBody } from '../social/post-data';
import type { PostDetails } from '../social/posts';
import { postMediaType } from '../social/posts';
import { bareHandle, handleOfPath, profilePath } from '../social/site';

/** The social family's pure helpers: counts as the site writes them, kinds of post, handles. */

test('counts as the site writes them become numbers', () => {
  const cases: Array<[string | null, number | null]> = [
    ['283M followers', 283_000_000],
    ['1.2K followers', 1_200],
    ['1,2K', 1_200],
    ['12,345 likes', 12_345],
    ['12.345 likes', 12_345],
    ['1,234,567 views', 1_234_567],
    ['1.2M views', 1_200_000],
    ['3B', 3_000_000_000],
    ['155 following', 155],
    ['0 posts', 0],
    ['no number here', null],
    ['', null],
    [null, null],
  ];
  expect(cases.map(([text]) => [text, parseCount(text)])).toEqual(cases);
});

test('follow buttons become statuses; an unknown label is null', () => {
  expect(
    [
      'Follow',
      'Follow Back',
      'Following',
      'Requested',
      'Edit profile',
      ' following ',
      'Message',
      null,
    ].map(followStatusOf),
  ).toEqual([
    'not_following',
    'not_following',
    'following',
    'requested',
    'own_profile',
    'following',
    null,
    null,
  ]);
});

test('the kind of an open post: reel by address, carousel by count, else its one media', () => {
  const post = (media: Array<'img' | 'video'>, is_reel = false): PostDetails => ({
    author: 'a',
    shortcode: 'X',
    href: null,
    is_reel,
    date: null,
    caption: null,
    likes_text: null,
    views_text: null,
    location: null,
    tagged: [],
    media: media.map((type, i) => ({ position: i + 1, type, url: null })),
  });
  expect(
    [post(['img']), post(['video']), post(['img', 'video']), post(['video'], true), post([])].map(
      postMediaType,
    ),
  ).toEqual(['photo', 'video', 'carousel', 'reel', 'photo']);
});

test('handles: the @ and case go, paths round-trip, other paths are not profiles', () => {
  expect(bareHandle(' @NatGeo ')).toBe('natgeo');
  expect(profilePath('@Nat.Geo_1')).toBe('/nat.geo_1/');
  expect(['/natgeo/', '/natgeo', '/p/ABC/', '/', '/a/b/'].map(handleOfPath)).toEqual([
    'natgeo',
    'natgeo',
    null,
    null,
    null,
  ]);
});

test('a post’s media from the site’s API answers, in both shapes it has used', () => {
  const current = {
    data: {
      items: [
        { code: 'OTHER', video_versions: [{ url: 'https://cdn/x.mp4' }] },
        {
          code: 'CAR1',
          carousel_media: [
            { image_versions2: { candidates: [{ url: 'https://cdn/1.jpg' }, { url: 'small' }] } },
            {
              image_versions2: { candidates: [{ url: 'https://cdn/2.jpg' }] },
              video_versions: [{ url: 'https://cdn/2.mp4' }],
            },
          ],
        },
      ],
    },
  };
  expect(findPostMedia(current, 'CAR1')).toEqual([
    { type: 'img', url: 'https://cdn/1.jpg' },
    { type: 'video', url: 'https://cdn/2.mp4' },
  ]);
  expect(findPostMedia(current, 'OTHER')).toEqual([{ type: 'video', url: 'https://cdn/x.mp4' }]);
  const graphql = {
    shortcode_media: {
      shortcode: 'OLD1',
      edge_sidecar_to_children: {
        edges: [
          { node: { display_url: 'https://cdn/a.jpg' } },
          { node: { display_url: 'https://cdn/b.jpg', video_url: 'https://cdn/b.mp4' } },
        ],
      },
    },
  };
  expect(findPostMedia(graphql, 'OLD1')).toEqual([
    { type: 'img', url: 'https://cdn/a.jpg' },
    { type: 'video', url: 'https://cdn/b.mp4' },
  ]);
  // A mention of the code without media (a comment, a link) is not the post.
  expect(findPostMedia({ items: [{ code: 'CAR1', text: 'see CAR1' }] }, 'CAR1')).toBeNull();
  expect(findPostMedia(undefined, 'CAR1')).toBeNull();
  expect(parseApiBody('for (;;);{"a":1}')).toEqual({ a: 1 });
  expect(parseApiBody('<html>')).toBeUndefined();
});
