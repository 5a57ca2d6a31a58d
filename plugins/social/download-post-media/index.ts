import type { PluginContext } from '@persona-browser/plugin-sdk';
import { definePlugin, SiteError, clickOnScreen } from '@persona-browser/plugin-sdk';
import type { PostDetails, PostMedia } from '../posts';
import { mediaFromCapture, readOpenPost, readPost } from '../posts';
import { SELECTORS } from '../site';

/** The file names' extensions of the types the site serves. */
const EXTENSIONS: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
  'image/heic': 'heic',
  'image/avif': 'avif',
  'image/svg+xml': 'svg',
  'video/mp4': 'mp4',
  'video/webm': 'webm',
  'video/quicktime': 'mov',
};

/** How long a person lets a slide settle before reading it. */
const SLIDE_SETTLE_MS = 600;

/** Where a media's file is, or why there is none to download. */
function fileOf(m: PostMedia): { url: string } | { why: string } {
  if (m.url === null) return { why: 'the site did not render this media' };
  if (m.url.startsWith('blob:'))
    return { why: 'the site streams this video (blob: address), no file to download' };
  if (!/^https?:/.test(m.url))
    return { why: `its address is not a web address: ${m.url.slice(0, 40)}` };
  return { url: m.url };
}

const fetchable = (m: PostMedia): boolean => 'url' in fileOf(m);

/**
 * The post's media with every slide's address: slides the site renders lazily are brought on
 * screen with the carousel's Next button, as a person browsing them would.
 */
async function allMedia(
  ctx: PluginContext,
  d: PostDetails,
): Promise<{ media: PostMedia[]; steps: number }> {
  const media = d.media.map((m) => ({ ...m }));
  let steps = 0;
  while (media.some((m) => m.url === null) && steps < media.length) {
    if (!(await ctx.page.exists(SELECTORS.nextButton))) break;
    await clickOnScreen(ctx, SELECTORS.nextButton, "the carousel's Next button");
    steps += 1;
    await ctx.sleep(SLIDE_SETTLE_MS);
    const again = await readPost(ctx);
    again?.media.forEach((m, i) => {
      const known = media[i];
      if (known && known.url === null) known.url = m.url;
    });
  }
  return { media, steps };
}

export default definePlugin({
  async run(ctx) {
    const { post: d } = await readOpenPost(ctx);
    const { media, steps } = await allMedia(ctx, d);
    // A video played from a blob: address has no file in the DOM; the site's API answer to the
    // page (in the capture) names it, when it lists the same media.
    const missing = media.some((m) => !fetchable(m));
    const api = missing && d.shortcode ? await mediaFromCapture(ctx, d.shortcode) : null;
    const sourced = media.map((m) => {
      const known = api?.length === media.length ? api[m.position - 1] : undefined;
      if (fetchable(m) || !known?.url || known.type !== m.type) {
        return { ...m, source: 'page' as const };
      }
      return { ...m, url: new URL(known.url, ctx.page.url()).href, source: 'site_api' as const };
    });
    const base = `${d.author ?? 'post'}_${d.shortcode ?? 'unknown'}`;
    const files = [];
    const skipped = [];
    for (const m of sourced) {
      const at = fileOf(m);
      if ('why' in at) {
        skipped.push({ position: m.position, type: m.type, reason: at.why });
        continue;
      }
      const file = await ctx.page.fetchFile(at.url);
      if (file.status < 200 || file.status > 299) {
        skipped.push({
          position: m.position,
          type: m.type,
          reason: `the site answered HTTP ${file.status}`,
        });
        continue;
      }
      const fallback = m.type === 'video' ? 'video/mp4' : 'image/jpeg';
      const type = file.content_type ?? fallback;
      const ext = EXTENSIONS[type] ?? (m.type === 'video' ? 'mp4' : 'jpg');
      const filename = `${base}_${m.position}.${ext}`;
      const link = ctx.media.put(file.bytes, filename, type);
      files.push({
        position: m.position,
        type: m.type,
        media_url: link.media_url,
        filename,
        content_type: type,
        size_bytes: file.bytes.length,
        source_url: m.url,
        source: m.source,
      });
    }
    if (files.length === 0) {
      const reasons = skipped.map((s) => `media ${s.position}: ${s.reason}`).join('; ');
      throw new SiteError('a media file to download in the open post', reasons || 'no media');
    }
    const browsed = steps > 0 ? ` (browsed ${steps} slide(s) to load them)` : '';
    return {
      shortcode: d.shortcode,
      author: d.author,
      count: files.length,
      files,
      skipped,
      page_url: ctx.page.url(),
      message:
        `Downloaded ${files.length} of ${media.length} media of ${d.shortcode}${browsed}; ` +
        'each media_url downloads once within 300 s',
    };
  },
});
