/**
 * The media of a post as the site's own API describes it (the JSON its pages fetch): the way
 * to a video the page plays from a `blob:` address, where the DOM holds no file address.
 * Pure: it reads parsed JSON only. Both shapes the site has used are known: the current one
 * (`code`, `video_versions`, `image_versions2.candidates`, `carousel_media`) and the older
 * GraphQL one (`shortcode`, `video_url`, `display_url`, `edge_sidecar_to_children`).
 */

export interface ApiMedia {
  type: 'img' | 'video';
  url: string | null;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null;

/** The best (first) address of a version list: `[{url}]` or `{candidates: [{url}]}`. */
function firstUrl(v: unknown): string | null {
  const list = isObject(v) && Array.isArray(v.candidates) ? v.candidates : v;
  if (!Array.isArray(list)) return null;
  const first: unknown = list[0];
  return isObject(first) && typeof first.url === 'string' ? first.url : null;
}

function mediaOfItem(n: Json): ApiMedia {
  const video =
    firstUrl(n.video_versions) ?? (typeof n.video_url === 'string' ? n.video_url : null);
  const image =
    firstUrl(n.image_versions2) ?? (typeof n.display_url === 'string' ? n.display_url : null);
  return video ? { type: 'video', url: video } : { type: 'img', url: image };
}

export const HAS_MEDIA = [
  'video_versions',
  'image_versions2',
  'carousel_media',
  'video_url',
  'display_url',
  'edge_sidecar_to_children',
];

/** Nodes visited at most: an API answer is large, but not unbounded. */
const MAX_NODES = 200_000;

/** The post `shortcode` in `data`, wherever it is nested; null when it is not there. */
function findPost(data: unknown, shortcode: string): Json | null {
  const stack: unknown[] = [data];
  for (let seen = 0; stack.length > 0 && seen < MAX_NODES; seen += 1) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    if (!isObject(v)) continue;
    if ((v.code === shortcode || v.shortcode === shortcode) && HAS_MEDIA.some((k) => k in v)) {
      return v;
    }
    for (const x of Object.values(v)) if (typeof x === 'object' && x !== null) stack.push(x);
  }
  return null;
}

/** The media of post `shortcode` in carousel order, as an API answer lists them; or null. */
export function findPostMedia(data: unknown, shortcode: string): ApiMedia[] | null {
  const node = findPost(data, shortcode);
  if (!node) return null;
  if (Array.isArray(node.carousel_media))
    return node.carousel_media.filter(isObject).map(mediaOfItem);
  const sidecar = node.edge_sidecar_to_children;
  if (isObject(sidecar) && Array.isArray(sidecar.edges)) {
    return sidecar.edges
      .map((e: unknown) => (isObject(e) && isObject(e.node) ? e.node : null))
      .filter((n): n is Json => n !== null)
      .map(mediaOfItem);
  }
  return [mediaOfItem(node)];
}

/** An API body as JSON: the site prefixes some with `for (;;);` against JSON hijacking. */
export function parseApiBody(body: string): unknown {
  try {
    return JSON.parse(body.replace(/^\s*for\s*\(;;\);/, ''));
  } catch {
    return undefined;
  }
}
