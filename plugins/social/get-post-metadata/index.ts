import { definePlugin } from '@persona-browser/plugin-sdk';
import { parseCount } from '../people';
import { postMediaType, readOpenPost } from '../posts';

export default definePlugin({
  async run(ctx) {
    const { page, post: d } = await readOpenPost(ctx);
    const media_type = postMediaType(d);
    const shown = d.views_text ?? d.likes_text;
    return {
      author: d.author,
      shortcode: d.shortcode,
      url: d.href,
      media_type,
      date: d.date,
      caption: d.caption,
      likes: parseCount(d.likes_text),
      likes_text: d.likes_text,
      views: parseCount(d.views_text),
      views_text: d.views_text,
      liked: page.post?.liked ?? false,
      location: d.location,
      tagged: d.tagged,
      media: d.media,
      page_url: page.url,
      message:
        `${media_type} ${d.shortcode ?? '(no shortcode)'} by @${d.author ?? '?'}` +
        `${d.date ? ` posted ${d.date}` : ''}, ${d.media.length} media` +
        `${shown ? `, ${shown}` : ''}${d.location ? ` at ${d.location.name}` : ''}`,
    };
  },
});
